// bench/e2e: accepted → handler-start latency (p50/p99) and runs/s, embedded mode, one
// `sluice dev --functions bench/e2e/functions.ts` process on loopback. "Accepted" is when the
// Event API's 200 reaches the client. Targets: p50 < 20 ms, p99 < 250 ms.
// Usage: node --conditions=sluice-source bench/e2e/run.ts [latency events] [throughput events]
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startChild, peakRssMb, report } from '../lib.ts'

const latencyEvents = Number(process.argv[2] ?? 2_000)
const throughputEvents = Number(process.argv[3] ?? 20_000)
const LATENCY_RATE_PER_S = 200
/** Sent first at the same rate and not measured: JIT and caches warm up. */
const WARMUP_EVENTS = 1_000
const BATCH = 500
const CONCURRENT_BATCHES = 8

// Other work on the machine shows in the tail latency: the load average goes into the report.
const loadBefore = loadavg()[0]
const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-e2e-'))
const handlerLog = join(dataDir, 'handlers.log')
const sluice = await startChild(
  ['bin/sluice.js', 'dev', '--port', '0', '--data-dir', join(dataDir, 'data'), '--functions', 'bench/e2e/functions.ts'],
  { SLUICE_LOG_LEVEL: 'info', SLUICE_BENCH_LOG: handlerLog },
)
const now = () => Date.now() // as the handlers log it (bench/e2e/functions.ts)

async function post(events: unknown[]): Promise<{ ids: string[]; acceptedAt: number }> {
  const response = await fetch(`${sluice.url}/e/bench`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(events),
  })
  const body = (await response.json()) as { ids: string[] }
  const acceptedAt = now()
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${JSON.stringify(body)}`)
  return { ids: body.ids, acceptedAt }
}

/** Handler lines of one function, by internal ID, once `count` of them are there. */
async function handlerLines(fn: string, count: number, timeoutMs = 120_000): Promise<Map<string, string[]>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const lines = (await readFile(handlerLog, 'utf8').catch(() => '')).split('\n').filter((l) => l.startsWith(fn + ' '))
    if (lines.length >= count)
      return new Map(
        lines.map((l) => {
          const [, id, ...rest] = l.split(' ')
          return [id, rest]
        }),
      )
    if (Date.now() > deadline) throw new Error(`${fn}: ${lines.length} of ${count} runs started in time`)
    await sleep(50)
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
const round = (ms: number) => Math.round(ms * 10) / 10

/** Single events at a steady rate, a few in flight: the latency a producer sees at moderate load. */
async function latencyPhase(count: number, tag: string) {
  const accepted = new Map<string, number>()
  const inFlight = new Set<Promise<void>>()
  const start = now()
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / LATENCY_RATE_PER_S
    if (due > now()) await sleep(due - now())
    const send = post([{ name: 'bench/latency', data: { i, tag } }]).then(({ ids, acceptedAt }) => {
      accepted.set(ids[0], acceptedAt)
    })
    inFlight.add(send)
    void send.finally(() => inFlight.delete(send))
    if (inFlight.size >= 32) await Promise.race(inFlight)
  }
  await Promise.all(inFlight)
  const lines = await handlerLines('latency', accepted.size + (tag === 'measured' ? WARMUP_EVENTS : 0))
  const fromAccepted: number[] = []
  const fromReceived: number[] = []
  for (const [id, acceptedAt] of accepted) {
    const [receivedAt, startedAt] = lines.get(id)!.map(Number)
    fromAccepted.push(startedAt - acceptedAt)
    fromReceived.push(startedAt - receivedAt)
  }
  return { fromAccepted: fromAccepted.sort((a, b) => a - b), fromReceived: fromReceived.sort((a, b) => a - b) }
}

/** As fast as the producer can: batches of 500, 8 in flight; runs/s until the last handler started. */
async function throughputPhase(fn: 'no-step' | 'one-step', count: number) {
  const start = now()
  let next = 0
  const worker = async () => {
    while (next < count) {
      const size = Math.min(BATCH, count - next)
      next += size
      await post(Array.from({ length: size }, (_, n) => ({ name: `bench/${fn}`, data: { n } })))
    }
  }
  await Promise.all(Array.from({ length: CONCURRENT_BATCHES }, worker))
  const acceptedAll = now()
  const lines = await handlerLines(fn, count)
  const last = Math.max(...[...lines.values()].map((rest) => Number(rest[rest.length - 1])))
  return {
    runsPerSec: Math.round(count / ((last - start) / 1000)),
    eventsPerSec: Math.round(count / ((acceptedAll - start) / 1000)),
    seconds: (last - start) / 1000,
  }
}

await latencyPhase(WARMUP_EVENTS, 'warm-up')
const latency = await latencyPhase(latencyEvents, 'measured')
const noStep = await throughputPhase('no-step', throughputEvents)
const oneStep = await throughputPhase('one-step', throughputEvents)
const rssMb = peakRssMb(sluice.child.pid!)
await sluice.stop()
await rm(dataDir, { recursive: true, force: true })

const rows = [
  {
    case: `accepted → handler start, ${LATENCY_RATE_PER_S} events/s`,
    events: latencyEvents,
    'p50 ms': round(percentile(latency.fromAccepted, 50)),
    'p99 ms': round(percentile(latency.fromAccepted, 99)),
    'max ms': round(latency.fromAccepted.at(-1)!),
    'runs/s': '-',
  },
  {
    case: 'ingest receive → handler start',
    events: latencyEvents,
    'p50 ms': round(percentile(latency.fromReceived, 50)),
    'p99 ms': round(percentile(latency.fromReceived, 99)),
    'max ms': round(latency.fromReceived.at(-1)!),
    'runs/s': '-',
  },
  {
    case: `runs, no step (batches of ${BATCH})`,
    events: throughputEvents,
    'p50 ms': '-',
    'p99 ms': '-',
    'max ms': '-',
    'runs/s': noStep.runsPerSec,
  },
  {
    case: `runs, 1 step + return (batches of ${BATCH})`,
    events: throughputEvents,
    'p50 ms': '-',
    'p99 ms': '-',
    'max ms': '-',
    'runs/s': oneStep.runsPerSec,
  },
]
report('e2e', rows, {
  p50Ms: round(percentile(latency.fromAccepted, 50)),
  p99Ms: round(percentile(latency.fromAccepted, 99)),
  runsPerSecNoStep: noStep.runsPerSec,
  runsPerSecOneStep: oneStep.runsPerSec,
  ingestEventsPerSec: { noStep: noStep.eventsPerSec, oneStep: oneStep.eventsPerSec },
  rssMb,
  cpus: availableParallelism(),
  loadAvg1m: { before: Number(loadBefore.toFixed(2)), after: Number(loadavg()[0].toFixed(2)) },
  targets: { p50Ms: 20, p99Ms: 250 },
})
