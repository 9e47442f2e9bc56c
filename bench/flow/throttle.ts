// bench/flow/throttle: how exactly a throttle holds its limit (issue #31). A fresh `sluice dev` serves
// bench/flow/functions.ts's `throttled` (`throttle: { limit: 10, period: '1s' }`, burst 1), fed a
// steady open-loop load of `flow/throttled` faster than the limit (15 events/s) for 60 s; the backlog
// it builds then drains at the limit. Each run's step notes when it began. Starts are counted per
// period in back-to-back windows from the first start to the last full window: the limit should hold
// in every one (min, max, mean against it), and in any window of one period wherever it begins (the
// most starts in a sliding window). Every event must start exactly once, in the order sent.
// Usage: node --no-node-snapshot --conditions=sluice-source bench/flow/throttle.ts
//   [seconds (60)] [events/s (15)]
import { availableParallelism, loadavg } from 'node:os'
import { peakRssMb, report } from '../lib.ts'
import { cpuMicros, round } from '../wrk.ts'
import { steadyLoad } from '../waits/load.ts'
import { startFlowServer, startsWhen } from './starts.ts'

const seconds = Number(process.argv[2] ?? 60)
const rate = Number(process.argv[3] ?? 15)
/** As `throttled` in bench/flow/functions.ts. */
const LIMIT = 10
const PERIOD_MS = 1_000
const loadBefore = loadavg()[0]

/** Starts per back-to-back window of `PERIOD_MS` from the first start (full windows only). */
function perWindow(times: number[]): number[] {
  const first = times[0]
  const windows = Math.floor((times.at(-1)! - first) / PERIOD_MS)
  const counts = new Array<number>(windows).fill(0)
  for (const t of times) {
    const w = Math.floor((t - first) / PERIOD_MS)
    if (w < windows) counts[w]++
  }
  return counts
}

/** The most starts within any half-open window of `PERIOD_MS`, wherever it begins. */
function slidingMax(times: number[]): number {
  let most = 0
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i] - times[j] >= PERIOD_MS) j++
    most = Math.max(most, i - j + 1)
  }
  return most
}

const { server, logPath, close } = await startFlowServer('flow-throttle')
try {
  const cpuBefore = cpuMicros(server.pid)
  const loadStarted = Date.now()
  const load = await steadyLoad(server, rate, loadStarted + seconds * 1000, (n) => ({
    name: 'flow/throttled',
    data: { n },
  }))
  // The backlog drains at the limit: give it that long, and half again.
  const drainMs = ((load.sent / LIMIT) * PERIOD_MS - (Date.now() - loadStarted)) * 1.5 + 30_000
  const { starts, repeated } = await startsWhen(logPath, (s) => s.length >= load.sent, drainMs, 'throttle')
  const cpuShare = (cpuMicros(server.pid) - cpuBefore) / 1000 / (Date.now() - loadStarted)
  const times = starts.map((s) => s.startedAt).sort((a, b) => a - b)
  // In order: the runs began in the order the events were sent (by start time, then by log line).
  const byStart = [...starts].sort((a, b) => a.startedAt - b.startedAt)
  let outOfOrder = 0
  for (let i = 1; i < byStart.length; i++) if (byStart[i].n < byStart[i - 1].n) outOfOrder++
  const sentNs = new Set(starts.map((s) => s.n))
  let missing = 0
  for (let n = 0; n < load.sent; n++) if (!sentNs.has(n)) missing++
  const counts = perWindow(times)
  const spanS = (times.at(-1)! - times[0]) / 1000
  const mean = counts.reduce((a, b) => a + b, 0) / counts.length
  const rows = [
    {
      'limit / period': `${LIMIT} / ${PERIOD_MS / 1000} s`,
      events: load.sent,
      started: starts.length,
      windows: counts.length,
      'min / period': Math.min(...counts),
      'max / period': Math.max(...counts),
      'mean / period': round(mean, 2),
      'windows ≠ limit': counts.filter((c) => c !== LIMIT).length,
      'max in sliding period': slidingMax(times),
      'starts/s overall': round((times.length - 1) / spanS, 2),
      'out of order': outOfOrder,
      missing,
      repeated,
    },
  ]
  report('flow-throttle', rows, {
    seconds,
    eventsPerSec: load.eventsPerSec,
    skipped: load.skipped,
    perPeriod: counts,
    gapsMs: gapStats(times),
    serverCpuPercent: round(cpuShare * 100, 0),
    peakRssMb: peakRssMb(server.pid),
    allocator: server.allocator,
    cpus: availableParallelism(),
    loadAvg1m: { before: round(loadBefore, 2), after: round(loadavg()[0], 2) },
    targets: { perPeriod: LIMIT },
  })
} finally {
  await close()
}

/** The time between consecutive starts: the throttle's interval is period / limit (100 ms). */
function gapStats(times: number[]) {
  const gaps = times
    .slice(1)
    .map((t, i) => t - times[i])
    .sort((a, b) => a - b)
  const at = (p: number) => gaps[Math.min(gaps.length - 1, Math.floor((p / 100) * gaps.length))]
  const mean = round((times.at(-1)! - times[0]) / gaps.length, 1)
  return { min: gaps[0], p50: at(50), p99: at(99), max: gaps.at(-1), mean }
}
