// bench/ingest: a bare fastify JSON echo vs Sluice's Event API (single events, 50- and 500-event
// batches), on loopback, loaded by wrk (one C thread) so the figures are the server's, not the load
// generator's. Per case: req/s, events/s, p50/p99, the server's CPU time (utime + stime from
// /proc/<pid>/stat) per request and per event, idle and peak RSS, and for Sluice the time the whole
// pipeline (dedup, store sink, router) takes to catch up after the load stops, then the time until
// RocksDB's flushes and compactions are done; the CPU of both is counted too. Each Sluice case runs
// twice, with durability `off` and `always` (SLUICE_DURABILITY: the WAL fdatasynced before each
// answer), one after the other on fresh servers: `alwaysVsOff` is what the sync costs.
// Rates and CPU per event count only accepted (2xx) requests: under backpressure the server holds
// requests back and may refuse some (503 PIPELINE_BEHIND), shown as `refused`.
// `--baseline <dir>`: a checkout of an earlier commit (a git worktree with node_modules) runs each
// case too, right after this one's, on a fresh server with its own defaults: `vsBaseline` is this
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
import { accepted, acceptedPerSec, cpuMicros, ensureWrk, round, rssMb, wrk } from '../wrk.ts'
import { batchOf, event } from './events.ts'

const args = process.argv.slice(2)
const at = args.indexOf('--baseline')
const baseline = at >= 0 ? resolve(args.splice(at, 2)[1]) : undefined
const roundsAt = args.indexOf('--rounds')
const rounds = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 1
if (!(Number.isInteger(rounds) && rounds >= 1)) throw new Error('bench/ingest: --rounds takes a whole number ≥ 1')
const seconds = Number(args[0] ?? 10)
const WARM_UP_S = 2
const CASES = [
  { case: 'single', body: JSON.stringify(event(1)), events: 1, connections: 64 },
  { case: '50-event batches', body: batchOf(50), events: 50, connections: 32 },
  { case: '500-event batches', body: batchOf(500), events: 500, connections: 16 },
]

ensureWrk()
/** One run of every case, the echo first; prints its table and returns its summary. */
async function runOnce(roundNo: number) {
  const rows: Array<Record<string, string | number>> = []

  const echo = await startChild(['bench/ingest/echo.ts'])
  const echoIdle = rssMb(echo.child.pid!)
  await wrk(`${echo.url}/e/k`, CASES[0].body, 64, WARM_UP_S)
  const echoCpu = cpuMicros(echo.child.pid!)
  const echoRun = await wrk(`${echo.url}/e/k`, CASES[0].body, 64, seconds)
  const echoCpuPerReq = (cpuMicros(echo.child.pid!) - echoCpu) / accepted(echoRun)
  rows.push(row('fastify echo, single', echoRun, 1, echoCpuPerReq, echoIdle, peakRssMb(echo.child.pid!), 0, 0))
  await echo.stop()

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
  for (const c of CASES) {
    const off = await measure(c, `sluice, ${c.case}, off`, { SLUICE_DURABILITY: 'off' })
    const always = await measure(c, `sluice, ${c.case}, always`, { SLUICE_DURABILITY: 'always' })
    results[c.case] = always.result
    alwaysVsOff[c.case] = {
      eventsPerSec: round(always.result.eventsPerSec / off.result.eventsPerSec, 3),
      p99: round(always.p99Ms / off.p99Ms, 3),
    }
    if (!baseline) continue
    const base = await measure(c, `baseline, ${c.case}`, {}, baseline)
    vsBaseline[c.case] = {
      eventsPerSec: round(always.result.eventsPerSec / base.result.eventsPerSec, 2),
      cpuPerEvent: round(always.result.cpuPerEventUs / base.result.cpuPerEventUs, 2),
    }
  }

  /** One case on a fresh server (so each peak RSS is that case's own), of this checkout or `root`'s. */
  async function measure(c: (typeof CASES)[number], name: string, env: NodeJS.ProcessEnv, root?: string) {
    const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-'))
    const sluice = await startSluice(dataDir, env, root)
    const pid = sluice.child.pid!
    allocator = allocatorOf(pid)
    await sleep(500)
    const idle = rssMb(pid)
    if (!root) idleRss.push(idle)
    await wrk(`${sluice.url}/e/k`, c.body, c.connections, WARM_UP_S)
    await drained(sluice)
    const cpuBefore = cpuMicros(pid)
    const run = await wrk(`${sluice.url}/e/k`, c.body, c.connections, seconds)
    const drainMs = await drained(sluice)
    const rocksdbMs = await rocksdbIdle(() => jobsRunning(sluice))
    const cpuPerReq = (cpuMicros(pid) - cpuBefore) / accepted(run)
    const peak = peakRssMb(pid)
    await sluice.stop()
    await rm(dataDir, { recursive: true, force: true })
    rows.push(row(name, run, c.events, cpuPerReq, idle, peak, drainMs, rocksdbMs))
    const result: Result = {
      requestsPerSec: acceptedPerSec(run),
      eventsPerSec: acceptedPerSec(run) * c.events,
      cpuPerReqUs: round(cpuPerReq),
      cpuPerEventUs: round(cpuPerReq / c.events, 2),
      peakRssMb: peak,
    }
    return { result, p99Ms: run.p99Ms }
  }

  const summary = {
    seconds,
    loadGenerator: 'wrk -t1',
    allocator,
    singleVsEcho: round(results.single.requestsPerSec / acceptedPerSec(echoRun), 2),
    singleCpuVsEcho: round(results.single.cpuPerReqUs / echoCpuPerReq, 2),
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : round((sorted[mid - 1] + sorted[mid]) / 2, 2)
}

function row(
  name: string,
  run: Awaited<ReturnType<typeof wrk>>,
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
