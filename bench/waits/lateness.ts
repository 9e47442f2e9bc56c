// bench/waits/lateness: how late sleeping runs wake (issue #30, target p99 < 1 s). One fresh
// `sluice dev` per case: runs of bench/waits/functions.ts's `punctual` sleep until known times
// (step.sleepUntil), spread evenly over a window that begins once all of them are asleep; the step
// after the sleep returns when it started, and lateness is that minus the time the sleep ended,
// read back over REST from each run's steps. Case "under load": a steady open-loop load of other
// events (`busy`, one step and the return) runs from 3 s before the window until it ends; the idle
// case has none. Also reported: the load achieved, the server's CPU share over the window, and how
// far behind (consumer lag) the pipeline was when the window ended.
// Usage: node --no-node-snapshot --conditions=sluice-source bench/waits/lateness.ts
//   [sleepers under load (10000)] [window seconds (60)] [load events/s (500)]
import { availableParallelism, loadavg } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { peakRssMb, report } from '../lib.ts'
import { cpuMicros, round } from '../wrk.ts'
import { metricsOf, percentile, runsOf, sendAll, seriesOf, settled, startServer, sumOf, type Server } from './server.ts'
import { steadyLoad } from './load.ts'

const sleepers = Number(process.argv[2] ?? 10_000)
const windowS = Number(process.argv[3] ?? 60)
const loadPerSec = Number(process.argv[4] ?? 500)
/** The idle case: fewer sleepers over a shorter window (at most these). */
const IDLE_SLEEPERS = 2_000
const IDLE_WINDOW_S = 20
const LOAD_LEAD_MS = 3_000
const LATE_MS = 1_000
const loadBefore = loadavg()[0]

/** The sleepers' wake times: even over the window, in an order that jumps about (golden-ratio steps). */
const wakeOffset = (i: number, windowMs: number) => Math.floor(((i * 0.6180339887) % 1) * windowMs)

async function runCase(name: string, count: number, windowMs: number, loadRate: number) {
  const server = await startServer('lateness')
  try {
    await settled(server)
    // Room to start them all before the first wakes: ~400 runs/s on a busy 2-core machine, and 10 s.
    const start = Date.now() + 10_000 + (count / 400) * 1000
    await sendAll(server, count, (i) => ({ name: 'bench/wake', data: { until: start + wakeOffset(i, windowMs) } }))
    await settled(server)
    const margin = start - Date.now()
    if (margin < LOAD_LEAD_MS) process.stderr.write(`lateness: only ${margin} ms of margin before the first wake\n`)
    await sleep(Math.max(0, start - LOAD_LEAD_MS - Date.now()))
    const cpuBefore = cpuMicros(server.pid)
    const load = await steadyLoad(server, loadRate, start + windowMs + 500, (n) => ({
      name: 'bench/load',
      data: { n },
    }))
    const cpuShare = (cpuMicros(server.pid) - cpuBefore) / 1000 / (Date.now() - (start - LOAD_LEAD_MS))
    const lagAtEnd = sumOf(await metricsOf(server), 'sluice_consumer_lag_records')
    const runs = await allCompleted(server, count)
    const lateness: number[] = []
    let notAsleepInTime = 0
    for (const run of runs) {
      const nap = run.steps.find((s: any) => s.id === 'nap')
      const after = run.steps.find((s: any) => s.id === 'after')
      // A sleepUntil already past when the run first executed completes at once, without a pause.
      if (!nap.pause) notAsleepInTime++
      else lateness.push(after.output - Date.parse(nap.pause.until))
    }
    lateness.sort((a, b) => a - b)
    return {
      row: {
        case: name,
        sleepers: count,
        'window s': windowMs / 1000,
        'load events/s': load.eventsPerSec,
        'server CPU %': round(cpuShare * 100, 0),
        'lag at end': lagAtEnd,
        'p50 ms': percentile(lateness, 50),
        'p99 ms': percentile(lateness, 99),
        'max ms': lateness.at(-1)!,
        [`> ${LATE_MS} ms`]: lateness.filter((ms) => ms > LATE_MS).length,
        'not asleep in time': notAsleepInTime,
      },
      p99Ms: percentile(lateness, 99),
      load,
      peakRssMb: peakRssMb(server.pid),
      allocator: server.allocator,
    }
  } finally {
    await server.close()
  }
}

/** The runs of `punctual` once `count` have completed (each waits for its wake time). */
async function allCompleted(server: Server, count: number, timeoutMs = 300_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const done = seriesOf(
      await metricsOf(server),
      'sluice_function_runs_total{function="bench-punctual",outcome="completed"}',
    )
    if (done >= count) break
    if (Date.now() > deadline) throw new Error(`lateness: ${done} of ${count} sleepers completed in time`)
    await sleep(500)
  }
  await settled(server)
  return runsOf(server, 'bench-punctual', 'completed')
}

const idle = await runCase(
  'no other load',
  Math.min(IDLE_SLEEPERS, sleepers),
  Math.min(IDLE_WINDOW_S, windowS) * 1000,
  0,
)
const loaded = await runCase(`under ${loadPerSec} events/s of other runs`, sleepers, windowS * 1000, loadPerSec)
report('waits-lateness', [idle.row, loaded.row], {
  p99MsIdle: idle.p99Ms,
  p99MsUnderLoad: loaded.p99Ms,
  loadSkipped: loaded.load.skipped,
  peakRssMb: { idle: idle.peakRssMb, underLoad: loaded.peakRssMb },
  allocator: loaded.allocator,
  cpus: availableParallelism(),
  loadAvg1m: { before: round(loadBefore, 2), after: round(loadavg()[0], 2) },
  targets: { p99Ms: LATE_MS },
})
