// Reads GET /metrics as Prometheus would: a small parser of the text format (0.0.4), and sums of
// the samples that carry given labels, so a test compares a family before and after a behaviour.

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Scrape {
  contentType: string
  text: string
  samples: Sample[]
  /** `# TYPE` of each family. */
  types: Map<string, string>
  /** Sum of the samples named `name` whose labels include `labels`. */
  total(name: string, labels?: Record<string, string>): number
  /** The samples named `name` whose labels include `labels`. */
  find(name: string, labels?: Record<string, string>): Sample[]
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g

export function parseMetrics(contentType: string, text: string): Scrape {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const type = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (type) types.set(type[1], type[2])
    if (line.startsWith('#')) continue
    const match = SAMPLE.exec(line)
    if (!match) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, name, raw] of (match[2] ?? '').matchAll(LABEL))
      labels[name] = raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    samples.push({ name: match[1], labels, value: Number(match[3]) })
  }
  const find = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  return {
    contentType,
    text,
    samples,
    types,
    find,
    total: (name, labels) => find(name, labels).reduce((sum, s) => sum + s.value, 0),
  }
}

/** How much the samples of `name` with `labels` grew from one scrape to a later one. */
export function change(before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}): number {
  return after.total(name, labels) - before.total(name, labels)
}

export async function scrape(baseUrl: string): Promise<Scrape> {
  const response = await fetch(`${baseUrl}/metrics`)
  if (response.status !== 200) throw new Error(`GET /metrics: ${response.status}`)
  return parseMetrics(response.headers.get('content-type') ?? '', await response.text())
}

/** Polls `baseUrl`'s metrics until `check` holds (pipelines are asynchronous); the last scrape. */
export async function scrapeUntil(
  baseUrl: string,
  check: (s: Scrape) => boolean,
  timeoutMs = 20_000,
  what = 'the metrics to move',
): Promise<Scrape> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const s = await scrape(baseUrl)
    if (check(s)) return s
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
