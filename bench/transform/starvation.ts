// bench/transform starvation: a good webhook's delivery latency, alone and while hostile
// webhooks are hammered (issue 9, defect 3: 150 requests to 4 looping webhooks in ~180 ms, then
// a steady ~12 req/s to each). Latency is the transformer's: a request's `processed_at - received_at`
// as recorded (received at ingest, outcome decided after the transform), so polling adds nothing.
// Target: the good webhook's p99 under attack within 100 ms of its baseline.
// An embedded server in this process, default settings (4 partitions of `raw`, 2 isolates,
// 100 ms CPU limit, breaker after 3 kills); the pause can be shortened to show re-probing.
// Usage: node --no-node-snapshot --conditions=sluice-source bench/transform/starvation.ts [seconds per phase] [breaker pause ms]
import { mkdtemp, rm } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { loadConfig } from '../../config/config.ts'
import { startEmbedded } from '../../server/embedded.ts'
import { createLogger } from '../../server/log.ts'
import { report } from '../lib.ts'

const seconds = Number(process.argv[2] ?? 10)
const pauseMs = process.argv[3] ?? '60000'
const GOOD_EVERY_MS = 20
const HOSTILE_WEBHOOKS = 4
const BURST = 150
const BURST_SPREAD_MS = 180
const STEADY_PER_WEBHOOK_PER_S = 12

const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-starvation-'))
const config = loadConfig(
  'dev',
  { port: '0', host: '127.0.0.1', dataDir, logLevel: 'silent', transformBreakerPauseMs: pauseMs },
  {},
)
const server = await startEmbedded(config, createLogger(process.env.BENCH_LOG ?? 'silent'))

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(server.url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return response.json()
}
const createWebhook = async (name: string, transform: string) =>
  (await call('POST', '/v1/webhooks', { name, transform })).data
const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
    (r) => r.json(),
  )

/** A few requests first, so compiling the transform and warming the JIT are not measured. */
async function warmUp(url: string): Promise<void> {
  for (let n = 0; n < 20; n++) await post(url, { kind: 'warm', id: `warm-${url}-${n}`, n })
}

const GOOD = 'function transform(evt) { return { name: "good/" + evt.kind, id: evt.id, data: { n: evt.n } } }'
const LOOP = 'function transform(evt) { while (true) {} }'

/** The good webhook sends one request every GOOD_EVERY_MS for the phase, without waiting for answers. */
async function sendGood(url: string, phase: string): Promise<string[]> {
  const answers: Array<Promise<{ request_id: string }>> = []
  const until = performance.now() + seconds * 1000
  for (let n = 0; performance.now() < until; n++) {
    answers.push(post(url, { kind: 'order.paid', id: `${phase}-${n}`, n }))
    await sleep(GOOD_EVERY_MS)
  }
  return (await Promise.all(answers)).map((a) => a.request_id)
}

/** Every request's outcome, once all are processed: latencies in ms and outcome counts. */
async function outcomes(
  webhookId: string,
  expected: number,
  measured?: string[],
): Promise<{ latencies: number[]; codes: Record<string, number> }> {
  for (;;) {
    const records: any[] = []
    let cursor: string | null = null
    do {
      const page: any = await call(
        'GET',
        `/v1/webhooks/${webhookId}/requests?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
      )
      records.push(...page.data)
      cursor = page.metadata.cursor
    } while (cursor && records.length < expected)
    if (records.length >= expected) {
      if (measured) {
        const wanted = new Set(measured)
        records.splice(0, records.length, ...records.filter((r) => wanted.has(r.request_id)))
      }
      const codes: Record<string, number> = {}
      for (const r of records) codes[r.error?.code ?? r.status] = (codes[r.error?.code ?? r.status] ?? 0) + 1
      if (process.env.BENCH_DEBUG) {
        const first = Math.min(...records.map((r) => r.received_at))
        const slowest = records
          .map((r) => [r.received_at - first, r.processed_at - r.received_at])
          .sort((a, b) => b[1] - a[1])
        console.error(JSON.stringify(slowest.slice(0, 15)))
      }
      return { latencies: records.map((r) => r.processed_at - r.received_at).sort((a, b) => a - b), codes }
    }
    await sleep(200)
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]
const rows: Array<Record<string, string | number>> = []
function row(phase: string, latencies: number[], hostile: string) {
  rows.push({
    phase,
    'good requests': latencies.length,
    'p50 ms': percentile(latencies, 50),
    'p99 ms': percentile(latencies, 99),
    'max ms': latencies[latencies.length - 1],
    'hostile outcomes': hostile,
  })
}

// Baseline: the good webhook alone.
const baseline = await createWebhook('good baseline', GOOD)
await warmUp(baseline.url)
const baselineIds = await sendGood(baseline.url, 'baseline')
row('baseline', (await outcomes(baseline.id, baselineIds.length + 20, baselineIds)).latencies, '-')

// Under attack: a burst to 4 looping webhooks, then a steady rate to each, while the good one sends as before.
const good = await createWebhook('good under attack', GOOD)
await warmUp(good.url)
const hostiles = await Promise.all(
  Array.from({ length: HOSTILE_WEBHOOKS }, (_, i) => createWebhook(`hostile ${i}`, LOOP)),
)
const hostileSent = hostiles.map(() => 0)
const hostileAnswers: Array<Promise<unknown>> = []
const hammer = (n: number) => {
  hostileSent[n % HOSTILE_WEBHOOKS]++
  hostileAnswers.push(post(hostiles[n % HOSTILE_WEBHOOKS].url, { n }))
}
const burst = (async () => {
  for (let n = 0; n < BURST; n++) {
    hammer(n)
    if (n % 10 === 9) await sleep(BURST_SPREAD_MS / (BURST / 10))
  }
})()
const steady = setInterval(() => {
  for (let i = 0; i < HOSTILE_WEBHOOKS; i++) hammer(i)
}, 1000 / STEADY_PER_WEBHOOK_PER_S)
const goodIds = await sendGood(good.url, 'attack')
clearInterval(steady)
await burst
await Promise.all(hostileAnswers)
const attacked = await outcomes(good.id, goodIds.length + 20, goodIds)
const hostileCodes: Record<string, number> = {}
for (const [i, hook] of hostiles.entries()) {
  const { codes } = await outcomes(hook.id, hostileSent[i])
  for (const [code, n] of Object.entries(codes)) hostileCodes[code] = (hostileCodes[code] ?? 0) + n
}
row(
  'under attack',
  attacked.latencies,
  Object.entries(hostileCodes)
    .map(([code, n]) => `${code}×${n}`)
    .join(' '),
)

await server.stop()
await rm(dataDir, { recursive: true, force: true })
const [base, attack] = rows
report('transform-starvation', rows, {
  cores: cpus().length,
  loadAvg1m: Number(loadavg()[0].toFixed(2)),
  secondsPerPhase: seconds,
  breakerPauseMs: Number(pauseMs),
  hostileSent: hostileSent.reduce((a, b) => a + b, 0),
  p99DeltaMs: Number(attack['p99 ms']) - Number(base['p99 ms']),
  target: 'p99 under attack within 100 ms of baseline',
})
