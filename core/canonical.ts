// One spelling for header names and one shape for query values, fixed at capture time, so a
// transform can write `headers['X-Github-Event']` and `queryParams.page[0]` whatever the sender did.
// Both build a Map first: Object.fromEntries defines own properties, so a sender's `__proto__`
// key stays a plain key instead of replacing the record's prototype.

/** `x-github-event` → `X-Github-Event`; repeated headers (arrays) joined with `, ` as HTTP allows. */
export function canonicalHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out = new Map<string, string>()
  for (const [name, value] of Object.entries(h)) {
    if (value === undefined) continue
    const canonical = canonicalName(name)
    const joined = Array.isArray(value) ? value.join(', ') : value
    // Two spellings of one name in a plain record (`X-A` and `x-a`) are one header: keep both values.
    const seen = out.get(canonical)
    out.set(canonical, seen === undefined ? joined : `${seen}, ${joined}`)
  }
  return Object.fromEntries(out)
}

export function canonicalName(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase())
}

/** A parsed query (URLSearchParams, or a record as fastify gives it) → every value an array of strings. */
export function queryArrays(q: URLSearchParams | Record<string, unknown>): Record<string, string[]> {
  const out = new Map<string, string[]>()
  const add = (key: string, value: string) => {
    const values = out.get(key)
    if (values) values.push(value)
    else out.set(key, [value])
  }
  if (q instanceof URLSearchParams) {
    for (const [key, value] of q) add(key, value)
  } else {
    for (const [key, value] of Object.entries(q)) {
      if (value === undefined || value === null) continue
      for (const item of Array.isArray(value) ? value : [value]) add(key, String(item))
    }
  }
  return Object.fromEntries(out)
}
