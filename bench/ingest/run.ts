// bench/ingest: a bare fastify JSON echo vs Sluice's Event API (single events, 50- and 500-event
// batches), on loopback, loaded by wrk (one C thread) so the figures are the server's, not the load
// generator's. Per case: req/s, events/s, p50/p99, the server's CPU time (utime + stime from
// /proc/<pid>/stat) per request and per event, idle and peak RSS, and for Sluice the time the whole
// pipeline (dedup, store sink, router) takes to catch up after the load stops, then the time until
// RocksDB's flushes and compactions are done; the CPU of both is counted too. Each Sluice case runs
// twice, with durability `off` and `always` (SLUICE_DURABILITY: the WAL fdatasynced before each
// answer), each on a fresh server: `alwaysVsOff` is what the sync costs.
// A case's servers (the echo's beside single events) run side by side and take the load in turns,
// five slices each, the order rotating: a drift in the host's speed, which moved one-after-the-other
// ratios by up to 15 %, falls on all of them alike. A server's CPU is counted from its first slice
// until its pipeline has caught up and RocksDB is idle, so it holds what an idle Sluice spends while
// the others take their turns (~8 ms a second here: ~2 % of a case's CPU, against Sluice).
// Rates and CPU per event count only accepted (2xx) requests: under backpressure the server holds
// requests back and may refuse some (503 PIPELINE_BEHIND), shown as `refused`.
// `--baseline <dir>`: a checkout of an earlier commit (a git worktree with node_modules) runs each
// case too, beside this one's, on a fresh server with its own defaults: `vsBaseline` is this
// checkout's `always` against it, from the same run on the same machine.
// `--rounds <n>`: the whole run n times over (each round's echo beside its own cases), each round's
// table as it ends, then the target figures of every round and their medians: on a host whose speed
// drifts (an A/A pair of one build differed by up to 15 %), one round's ratios are one sample.
// Usage: node --conditions=sluice-source bench/ingest/run.ts [seconds] [--baseline <dir>] [--rounds <n>]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { allocatorOf, rocksdbIdle, startChild, startSluice, peakRssMb, report, type Child } from '../lib.ts'
import { accepted, acceptedPerSec, cpuMicros, ensureWrk, round, rssMb, wrk, type WrkResult } from '../wrk.ts'
import { batchOf, event } from './events.ts'

const args = process.argv.slice(2)
const at = args.indexOf('--baseline')
const baseline = at >= 0 ? resolve(args.splice(at, 2)[1]) : undefined
const roundsAt = args.indexOf('--rounds')
const rounds = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 1
if (!(Number.isInteger(rounds) && rounds >= 1)) throw new Error('bench/ingest: --rounds takes a whole number ≥ 1')
const seconds = Number(args[0] ?? 10)
const WARM_UP_S = 2
/** Turns each server of a case takes (`interleaved`): `seconds / SLICES` of load each, in whole seconds. */
const SLICES = 5
const CASES = [
  { case: 'single', body: JSON.stringify(event(1)), events: 1, connections: 64 },
  { case: '50-event batches', body: batchOf(50), events: 50, connections: 32 },
  { case: '500-event batches', body: batchOf(500), events: 500, connections: 16 },
]

ensureWrk()
/** One run of every case; prints its table and returns its summary. */
async function runOnce(roundNo: number) {
  const rows: Array<Record<string, string | number>> = []
  let allocator = ''
  type Result = {
    requestsPerSec: number
    eventsPerSec: number
    cpuPerReqUs: number
    cpuPerEventUs: number
    peakRssMb: number
  }
  const results: Record<string, Result> = {}
  const idleRss: number[] = []
  const alwaysVsOff: Record<string, { eventsPerSec: number; p99: number }> = {}
  const vsBaseline: Record<string, { eventsPerSec: number; cpuPerEvent: number }> = {}
  let echo: Measured | undefined
  for (const c of CASES) {
    // A case's servers run side by side and take its load in turns (`interleaved`).
    const contenders: Contender[] = []
    if (c.case === 'single') contenders.push(await startEcho(c))
    contenders.push(await startCase(c, `sluice, ${c.case}, off`, { SLUICE_DURABILITY: 'off' }))
    contenders.push(await startCase(c, `sluice, ${c.case}, always`, { SLUICE_DURABILITY: 'always' }))
    if (baseline) contenders.push(await startCase(c, `baseline, ${c.case}`, {}, baseline))
    const measured = await interleaved(contenders, c)
    const byName = new Map(contenders.map((contender, i) => [contender.name, measured[i]]))
    if (c.case === 'single') echo = byName.get('fastify echo, single')
    const off = byName.get(`sluice, ${c.case}, off`)!
    const always = byName.get(`sluice, ${c.case}, always`)!
    results[c.case] = resultOf(always, c.events)
    alwaysVsOff[c.case] = {
      eventsPerSec: round(acceptedPerSec(always.run) / acceptedPerSec(off.run), 3),
      p99: round(always.run.p99Ms / off.run.p99Ms, 3),
    }
    if (!baseline) continue
    const base = byName.get(`baseline, ${c.case}`)!
    vsBaseline[c.case] = {
      eventsPerSec: round(acceptedPerSec(always.run) / acceptedPerSec(base.run), 2),
      cpuPerEvent: round(always.cpuPerReq / base.cpuPerReq, 2),
    }
  }

  /** The bare fastify echo, started and warmed up. */
  async function startEcho(c: (typeof CASES)[number]): Promise<Contender> {
    const server = await startChild(['bench/ingest/echo.ts'])
    const idle = rssMb(server.child.pid!)
    await wrk(`${server.url}/e/k`, c.body, c.connections, WARM_UP_S)
    return { name: 'fastify echo, single', server, idle }
  }

  /** A case on a fresh server (so each peak RSS is that case's own), of this checkout or `root`'s; warmed up. */
  async function startCase(c: (typeof CASES)[number], name: string, env: NodeJS.ProcessEnv, root?: string) {
    const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-'))
    const server = await startSluice(dataDir, env, root)
    const pid = server.child.pid!
    allocator = allocatorOf(pid)
    await sleep(500)
    const idle = rssMb(pid)
    if (!root) idleRss.push(idle)
    await wrk(`${server.url}/e/k`, c.body, c.connections, WARM_UP_S)
    await drained(server)
    return { name, server, idle, dataDir }
  }

  /**
   * Loads the contenders in turn, SLICES slices each of `seconds / SLICES` (the order rotating), so
   * that a change in the host's speed falls on all of them alike. Each one's CPU is counted from the
   * first slice until its pipeline has caught up and RocksDB's jobs are done (what its load left
   * running during another's slice is its own), per accepted request; then it stops.
   */
  async function interleaved(contenders: Contender[], c: (typeof CASES)[number]) {
    const cpuBefore = contenders.map(({ server }) => cpuMicros(server.child.pid!))
    const slices: WrkResult[][] = contenders.map(() => [])
    const sliceSeconds = Math.max(1, Math.round(seconds / SLICES)) // wrk takes whole seconds
    try {
      for (let slice = 0; slice < SLICES; slice++) {
        for (let k = 0; k < contenders.length; k++) {
          const i = (k + slice) % contenders.length
          slices[i].push(await wrk(`${contenders[i].server.url}/e/k`, c.body, c.connections, sliceSeconds))
        }
      }
    } catch (err) {
      // Stopped, and their data dirs removed, as a finished case's are.
      await Promise.all(
        contenders.map(async ({ server, dataDir }) => {
          await server.stop()
          if (dataDir) await rm(dataDir, { recursive: true, force: true })
        }),
      )
      throw err
    }
    const measured: Measured[] = []
    for (const [i, { name, server, idle, dataDir }] of contenders.entries()) {
      const run = combined(slices[i])
      const drainMs = dataDir ? await drained(server) : 0
      const rocksdbMs = dataDir ? await rocksdbIdle(() => jobsRunning(server)) : 0
      const cpuPerReq = (cpuMicros(server.child.pid!) - cpuBefore[i]) / accepted(run)
      const peak = peakRssMb(server.child.pid!)
      await server.stop()
      if (dataDir) await rm(dataDir, { recursive: true, force: true })
      rows.push(row(name, run, c.events, cpuPerReq, idle, peak, drainMs, rocksdbMs))
      measured.push({ run, cpuPerReq, peak })
    }
    return measured
  }

  function resultOf({ run, cpuPerReq, peak }: Measured, events: number): Result {
    return {
      requestsPerSec: acceptedPerSec(run),
      eventsPerSec: acceptedPerSec(run) * events,
      cpuPerReqUs: round(cpuPerReq),
      cpuPerEventUs: round(cpuPerReq / events, 2),
      peakRssMb: peak,
    }
  }

  const summary = {
    seconds,
    loadGenerator: 'wrk -t1',
    allocator,
    singleVsEcho: round(results.single.requestsPerSec / acceptedPerSec(echo!.run), 2),
    singleCpuVsEcho: round(results.single.cpuPerReqUs / echo!.cpuPerReq, 2),
    batched50: results['50-event batches'],
    batched500: results['500-event batches'],
    peakRssMb: Math.max(...Object.values(results).map((r) => r.peakRssMb)),
    idleRssMb: Math.max(...idleRss),
    alwaysVsOff,
    ...(baseline && { baseline, vsBaseline }),
    targets: TARGETS,
  }
  report('ingest', rows, rounds > 1 ? { round: roundNo, ...summary } : summary)
  return summary
}

// Issue #32's, for `always` (the default).
const TARGETS = {
  alwaysVsOff: { eventsPerSec: 0.9, p99: 1.1 },
  singleVsEcho: 0.6,
  singleCpuVsEcho: 1.8,
  batched50CpuPerEventUs: 8,
  batched500CpuPerEventUs: 6,
  batched500VsBaseline: 2,
  peakRssMb: 512,
  idleRssMb: 150,
}

const summaries: Array<Awaited<ReturnType<typeof runOnce>>> = []
for (let n = 1; n <= rounds; n++) summaries.push(await runOnce(n))
if (rounds > 1) {
  // Per target: each round's figure, and their median against the target.
  type Summary = (typeof summaries)[number]
  const figures: Array<[figure: string, target: number, atLeast: boolean, of: (s: Summary) => number]> = [
    ["single events: req/s over the echo's", TARGETS.singleVsEcho, true, (s) => s.singleVsEcho],
    ["single events: CPU per request over the echo's", TARGETS.singleCpuVsEcho, false, (s) => s.singleCpuVsEcho],
    ['50-event batches: CPU µs per event', TARGETS.batched50CpuPerEventUs, false, (s) => s.batched50.cpuPerEventUs],
    ['500-event batches: CPU µs per event', TARGETS.batched500CpuPerEventUs, false, (s) => s.batched500.cpuPerEventUs],
    ['peak RSS MiB', TARGETS.peakRssMb, false, (s) => s.peakRssMb],
    ['idle RSS MiB', TARGETS.idleRssMb, false, (s) => s.idleRssMb],
  ]
  if (baseline)
    figures.splice(4, 0, [
      "500-event batches: events/s over the baseline's",
      TARGETS.batched500VsBaseline,
      true,
      (s) => s.vsBaseline!['500-event batches'].eventsPerSec,
    ])
  report(
    'ingest-rounds',
    figures.map(([figure, target, atLeast, of]) => {
      const values = summaries.map(of)
      const mid = median(values)
      return {
        figure,
        target: `${atLeast ? '≥' : '≤'} ${target}`,
        ...Object.fromEntries(values.map((v, i) => [`round ${i + 1}`, v])),
        median: mid,
        met: (atLeast ? mid >= target : mid <= target) ? 'yes' : 'no',
      }
    }),
    { seconds, rounds, ...(baseline && { baseline }) },
  )
}

/** A case's servers, side by side: the echo (no data dir) or Sluice's. */
interface Contender {
  name: string
  server: Child
  idle: number
  dataDir?: string
}

/** What `interleaved` measured of a server: its slices as one run, CPU µs per accepted request, peak RSS MiB. */
interface Measured {
  run: WrkResult
  cpuPerReq: number
  peak: number
}

/** A server's slices as one run: counts summed, the median p50, the worst p99. */
function combined(slices: WrkResult[]): WrkResult {
  const sum = (of: (r: WrkResult) => number) => slices.reduce((total, r) => total + of(r), 0)
  const requests = sum((r) => r.requests)
  const secondsRun = sum((r) => r.seconds)
  return {
    requests,
    seconds: secondsRun,
    requestsPerSec: Math.round(requests / secondsRun),
    p50Ms: median(slices.map((r) => r.p50Ms)),
    p99Ms: Math.max(...slices.map((r) => r.p99Ms)),
    non2xx: sum((r) => r.non2xx),
    socketErrors: sum((r) => r.socketErrors),
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : round((sorted[mid - 1] + sorted[mid]) / 2, 2)
}

function row(
  name: string,
  run: WrkResult,
  events: number,
  cpuPerReq: number,
  idle: number,
  peak: number,
  drainMs: number,
  rocksdbMs: number,
) {
  return {
    case: name,
    'req/s': acceptedPerSec(run),
    'events/s': acceptedPerSec(run) * events,
    'p50 ms': run.p50Ms,
    'p99 ms': run.p99Ms,
    'cpu µs/req': round(cpuPerReq),
    'cpu µs/event': round(cpuPerReq / events, 2),
    'idle MiB': idle,
    'peak MiB': peak,
    'drain ms': drainMs,
    'rocksdb ms': rocksdbMs,
    refused: run.non2xx,
    errors: run.socketErrors,
  }
}

/** RocksDB's flushes and compactions running now in `server`, from its /metrics. */
async function jobsRunning(server: Child): Promise<number[]> {
  const metrics = await (await fetch(`${server.url}/metrics`)).text()
  return [...metrics.matchAll(/^sluice_rocksdb_jobs_running\{[^}]*\} (\d+)/gm)].map((m) => Number(m[1]))
}

/** Sends a marker event and waits until it is stored: the pipeline topics keep order, so all before it is too. */
async function drained(server: Child): Promise<number> {
  const started = Date.now()
  const answer = await fetch(`${server.url}/e/k`, { method: 'POST', body: JSON.stringify(event(0)) })
  const { ids } = (await answer.json()) as { ids: string[] }
  while ((await fetch(`${server.url}/v1/events/${ids[0]}`)).status !== 200) await sleep(20)
  return Date.now() - started
}
