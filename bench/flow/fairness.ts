// bench/flow/fairness: a hot key's backlog must not hold back the other keys (issue #31, target: the
// cold keys' p99 start delay under 1 s). A fresh `sluice dev` serves bench/flow/functions.ts's `fair`
// (`concurrency: { limit: 1, key: 'event.data.key' }`, a 20 ms step); a steady open-loop load sends
// `flow/fair` over 1,000 keys, one of which (`hot`) gets 90 % of the events, the other 999 the rest in
// turn. The hot key starts at most one run at a time, fewer than it receives, so its backlog grows by
// design; the cold keys each get an event every few seconds. A run's start delay is when its step
// began minus when the server received its event (both noted by the step). Once every cold event has
// started, the hot key's runs that started so far are reported too, with what is still queued.
// Usage: node --no-node-snapshot --conditions=sluice-source bench/flow/fairness.ts
//   [seconds (60)] [events/s (200)] [keys (1000)] [hot share (0.9)]
import { availableParallelism, loadavg } from 'node:os'
import { peakRssMb, report } from '../lib.ts'
import { cpuMicros, round } from '../wrk.ts'
import { metricsOf, percentile, sumOf } from '../waits/server.ts'
import { steadyLoad } from '../waits/load.ts'
import { readStarts, startFlowServer, startsWhen, type Start } from './starts.ts'

const seconds = Number(process.argv[2] ?? 60)
const rate = Number(process.argv[3] ?? 200)
const keys = Number(process.argv[4] ?? 1000)
const hotShare = Number(process.argv[5] ?? 0.9)
const COLD_P99_TARGET_MS = 1_000
const HOT = 'hot'
const loadBefore = loadavg()[0]

/** Event n goes to a cold key when the cold share's running total steps up, else to the hot key. */
const coldShare = 1 - hotShare
const keyOf = (n: number) =>
  Math.floor((n + 1) * coldShare) > Math.floor(n * coldShare) ? `c${Math.floor(n * coldShare) % (keys - 1)}` : HOT

const delays = (starts: Start[]) => starts.map((s) => s.startedAt - s.receivedAt).sort((a, b) => a - b)
const stats = (sorted: number[]) => ({
  'start p50 ms': sorted.length ? percentile(sorted, 50) : '-',
  'start p99 ms': sorted.length ? percentile(sorted, 99) : '-',
  'start max ms': sorted.length ? sorted.at(-1)! : '-',
  [`> ${COLD_P99_TARGET_MS} ms`]: sorted.filter((ms) => ms > COLD_P99_TARGET_MS).length,
})

const { server, logPath, close } = await startFlowServer('flow-fairness')
try {
  const cpuBefore = cpuMicros(server.pid)
  const loadStarted = Date.now()
  const load = await steadyLoad(server, rate, loadStarted + seconds * 1000, (n) => ({
    name: 'flow/fair',
    data: { n, key: keyOf(n) },
  }))
  const loadMs = Date.now() - loadStarted
  const cpuShare = (cpuMicros(server.pid) - cpuBefore) / 1000 / loadMs
  const lagAtEnd = sumOf(await metricsOf(server), 'sluice_consumer_lag_records')
  const hotAtEnd = readStarts(logPath).starts.filter((s) => s.key === HOT).length
  // steadyLoad numbers the events it sends 0…sent-1 (a skipped batch takes no numbers).
  let coldSent = 0
  for (let n = 0; n < load.sent; n++) if (keyOf(n) !== HOT) coldSent++
  const coldStarted = (starts: Start[]) => starts.filter((s) => s.key !== HOT).length
  const { starts, repeated } = await startsWhen(logPath, (s) => coldStarted(s) >= coldSent, 120_000, 'fairness')
  const ends = readStarts(logPath, 'end').starts
  const cold = starts.filter((s) => s.key !== HOT)
  const hot = starts.filter((s) => s.key === HOT)
  const coldDelays = delays(cold)
  const hotDelays = delays(hot)
  const hotSent = load.sent - coldSent
  // Does the cold keys' delay grow with the hot key's backlog? Their p99 over each half of the load.
  const half = loadStarted + loadMs / 2
  const coldP99 = (part: Start[]) => (part.length ? percentile(delays(part), 99) : null)
  // Received → the run's end, of the runs that ended by then.
  const coldEnds = delays(ends.filter((s) => s.key !== HOT))
  const hotEnds = delays(ends.filter((s) => s.key === HOT))
  const rows = [
    {
      keys: `cold (${keys - 1})`,
      events: coldSent,
      started: cold.length,
      ...stats(coldDelays),
      ended: coldEnds.length,
      'end p99 ms': coldEnds.length ? percentile(coldEnds, 99) : '-',
    },
    {
      keys: 'hot (1)',
      events: hotSent,
      started: `${hot.length} (${hotAtEnd} by the load's end)`,
      ...stats(hotDelays),
      ended: hotEnds.length,
      'end p99 ms': hotEnds.length ? percentile(hotEnds, 99) : '-',
    },
  ]
  report('flow-fairness', rows, {
    seconds,
    eventsPerSec: load.eventsPerSec,
    skipped: load.skipped,
    keys,
    hotShare,
    coldP99Ms: percentile(coldDelays, 99),
    coldP99MsByHalf: {
      first: coldP99(cold.filter((s) => s.receivedAt < half)),
      second: coldP99(cold.filter((s) => s.receivedAt >= half)),
    },
    hotStartsPerSec: round(hotAtEnd / (loadMs / 1000), 1),
    hotQueuedAtEnd: hotSent - hot.length,
    repeatedStarts: repeated,
    serverCpuPercent: round(cpuShare * 100, 0),
    lagAtEnd,
    peakRssMb: peakRssMb(server.pid),
    allocator: server.allocator,
    cpus: availableParallelism(),
    loadAvg1m: { before: round(loadBefore, 2), after: round(loadavg()[0], 2) },
    targets: { coldP99Ms: COLD_P99_TARGET_MS },
  })
} finally {
  await close()
}
