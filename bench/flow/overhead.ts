// bench/flow/overhead: what flow control costs a run when it limits nothing (issue #31). One fresh
// `sluice dev` per case, each serving bench/flow/functions.ts: the same one-step function without
// flow control (`plain`), with `concurrency: { limit: 100, key: 'event.data.key' }` over 1,000 keys
// (`concurrent`), with `concurrency: 100` (`concurrent-fn`), with a throttle of 100/s per key
// (`throttled-keyed`), and with `throttle: { limit: 10000, period: '1s', burst: 1000 }`
// (`throttled-high`). A function-wide limit keeps every queued record under one queue key; a keyed
// one spreads them over 1,000. A steady open-loop load (200 events/s) warms the server up for 5 s;
// once those runs have ended it runs for the measured seconds, and the server's CPU (utime + stime)
// is counted from its start until every run it started has completed and RocksDB is idle (so the
// compaction the load caused counts), then divided by the runs completed; the CPU share is over the
// same span (100 % = one core). With flow control a run's records go through the durable queue
// (runner/flow-handler.ts, runner/scheduler.ts): the difference against `plain` is that cost. The CPU
// per run is also split by kind of thread (bench/flow/threads.ts): JavaScript, libuv's pool (where
// rocksdb-native reads, writes and iterates), RocksDB's flushes and compactions, V8's helpers.
// Usage: node --no-node-snapshot --conditions=sluice-source bench/flow/overhead.ts
//   [seconds (20)] [events/s (200)] [cases, e.g. plain,concurrent,throttled-high]
import { setTimeout as sleep } from 'node:timers/promises'
import { availableParallelism, loadavg } from 'node:os'
import { peakRssMb, report } from '../lib.ts'
import { cpuMicros, round } from '../wrk.ts'
import { metricsOf, seriesOf, settled, startServer, type Server } from '../waits/server.ts'
import { steadyLoad } from '../waits/load.ts'
import { cpuByThread, perThreadDelta } from './threads.ts'

const seconds = Number(process.argv[2] ?? 20)
const rate = Number(process.argv[3] ?? 200)
const CASES: Record<string, string> = {
  plain: 'none',
  concurrent: 'concurrency 100 per key (1,000 keys)',
  'concurrent-fn': 'concurrency 100 (function-wide)',
  'throttled-keyed': 'throttle 100/s per key, burst 100',
  'throttled-high': 'throttle 10,000/s, burst 1,000 (function-wide)',
}
const cases = (process.argv[4] ?? Object.keys(CASES).join(',')).split(',')
const KEYS = 1_000
const WARM_UP_S = 5
const loadBefore = loadavg()[0]

const completedOf = async (server: Server, id: string) =>
  seriesOf(await metricsOf(server), `sluice_function_runs_total{function="bench-${id}",outcome="completed"}`)

/** Waits until `count` runs of the function have completed (each 250 ms), then until the server settles. */
async function completed(server: Server, id: string, count: number, timeoutMs = 300_000): Promise<number> {
  const deadline = Date.now() + timeoutMs
  let done = await completedOf(server, id)
  for (; done < count; done = await completedOf(server, id)) {
    if (Date.now() > deadline) throw new Error(`overhead: ${done} of ${count} runs of ${id} completed in time`)
    await sleep(250)
  }
  await settled(server)
  return done
}

async function runCase(id: string) {
  const server = await startServer(`flow-overhead-${id}`, { functions: 'bench/flow/functions.ts' })
  try {
    await settled(server)
    let n = 0
    const make = () => {
      const i = n++
      return { name: `flow/${id}`, data: { n: i, key: `k${i % KEYS}` } }
    }
    const warm = await steadyLoad(server, rate, Date.now() + WARM_UP_S * 1000, make)
    await completed(server, id, warm.sent)
    const cpuBefore = cpuMicros(server.pid)
    const threadsBefore = cpuByThread(server.pid)
    const started = Date.now()
    const load = await steadyLoad(server, rate, started + seconds * 1000, make)
    const loadEnded = Date.now()
    const done = (await completed(server, id, warm.sent + load.sent)) - warm.sent
    const cpuUs = cpuMicros(server.pid) - cpuBefore
    const byThread = perThreadDelta(threadsBefore, cpuByThread(server.pid), done)
    return {
      id,
      load,
      runs: done,
      cpuPerRunUs: cpuUs / done,
      byThread,
      cpuPercent: (cpuUs / 1000 / (Date.now() - started)) * 100,
      settleMs: Date.now() - loadEnded,
      peakRssMb: peakRssMb(server.pid),
      allocator: server.allocator,
    }
  } finally {
    await server.close()
  }
}

const results = []
for (const id of cases) results.push(await runCase(id))
const plain = results.find((r) => r.id === 'plain')
const rows = results.map((r) => ({
  function: r.id,
  'flow control': CASES[r.id],
  'events/s': r.load.eventsPerSec,
  runs: r.runs,
  'server CPU %': round(r.cpuPercent, 0),
  'cpu µs/run': round(r.cpuPerRunUs, 0),
  'flow µs/run': plain ? round(r.cpuPerRunUs - plain.cpuPerRunUs, 0) : '-',
  'main / libuv / rocksdb / v8 µs': ['main', 'libuv', 'rocksdb', 'v8'].map((k) => r.byThread[k]).join(' / '),
  'settle ms': r.settleMs,
  'peak RSS MiB': r.peakRssMb,
}))
report('flow-overhead', rows, {
  seconds,
  eventsPerSec: rate,
  flowUsPerRun: Object.fromEntries(
    results.filter((r) => plain && r !== plain).map((r) => [r.id, round(r.cpuPerRunUs - plain!.cpuPerRunUs, 0)]),
  ),
  cpuByThreadUsPerRun: Object.fromEntries(results.map((r) => [r.id, r.byThread])),
  skipped: results.reduce((sum, r) => sum + r.load.skipped, 0),
  allocator: results[0].allocator,
  cpus: availableParallelism(),
  loadAvg1m: { before: round(loadBefore, 2), after: round(loadavg()[0], 2) },
})
