// bench/waits/matching: what open waits cost the events that flow past them (issue #30, target
// < 5 µs per event per matching-wait lookup, whatever the number of open waits). One fresh `sluice dev`
// per case: none, 1,000 or 10,000 runs of bench/waits/functions.ts's `waiter` wait for `bench/paid`
// with their own `data.order` (distinct values); once all wait and RocksDB is idle, `bench/paid`
// flows at a steady 1,000 events/s (a 10-event batch every 10 ms), in two phases: none of them
// matches an open wait, then a share of them (1 %) each matches one. The router sends an event to
// the matcher only when its name has waits, so with none open the events skip matching: the
// difference in the server's CPU per event (utime + stime, over the measured seconds of a steady
// load, after a warm-up) is what matching costs. Each bench/paid event looks up one match key.
// The first wait of a case is opened alone, then the rest: waits registered at once, before the
// first registration is durable, each add a record to the `wait-keys` topic, which the router reads
// whole before every batch; the case `N:burst` opens them all at once and shows that cost. Per case
// the records on `wait-keys` are counted in the stopped server's data dir.
// Usage: node --no-node-snapshot --conditions=sluice-source bench/waits/matching.ts
//   [seconds per phase (15)] [events/s (1000)] [cases, e.g. 0,1000,10000,1000:burst]
import { availableParallelism, loadavg } from 'node:os'
import { peakRssMb, report } from '../lib.ts'
import { cpuMicros, round } from '../wrk.ts'
import { metricsOf, runsOf, sendAll, settled, startServer, sumOf, waitKeyRecords, type Server } from './server.ts'
import { steadyLoad } from './load.ts'

const seconds = Number(process.argv[2] ?? 15)
const rate = Number(process.argv[3] ?? 1000)
const cases = (process.argv[4] ?? '0,1000,10000,1000:burst').split(',').map((c) => ({
  openWaits: Number(c.split(':')[0]),
  burst: c.endsWith(':burst'),
}))
const WARM_UP_S = 3
const MATCH_SHARE = 0.01
const loadBefore = loadavg()[0]

interface Phase {
  name: string
  /** Of every 1/share events, one names the next open wait's order; the others an order nobody waits for. */
  share: number
}
const PHASES: Phase[] = [
  { name: 'no event matches', share: 0 },
  { name: `${MATCH_SHARE * 100} % match`, share: MATCH_SHARE },
]

/** The server's CPU per event over `seconds` of steady load, after a warm-up of the same load. */
async function measurePhase(server: Server, phase: Phase, nextWait: { k: number }) {
  const every = phase.share === 0 ? 0 : Math.round(1 / phase.share)
  let miss = 0
  const make = (n: number) => ({
    name: 'bench/paid',
    data: { order: every > 0 && n % every === every - 1 ? `o-${nextWait.k++}` : `x-${miss++}`, amount: 42 },
  })
  const matchedBefore = sumOf(await metricsOf(server), 'sluice_waits_matched_total')
  await steadyLoad(server, rate, Date.now() + WARM_UP_S * 1000, make)
  const cpuBefore = cpuMicros(server.pid)
  const load = await steadyLoad(server, rate, Date.now() + seconds * 1000, make)
  const cpuPerEventUs = (cpuMicros(server.pid) - cpuBefore) / load.sent
  await settled(server)
  return {
    eventsPerSec: load.eventsPerSec,
    skipped: load.skipped,
    cpuPerEventUs,
    matched: sumOf(await metricsOf(server), 'sluice_waits_matched_total') - matchedBefore,
  }
}

/**
 * Opens `openWaits` waits on a fresh server and measures each phase. The first wait is opened alone:
 * registrations racing it each add a record to `wait-keys`, which the router then reads before
 * every batch (see the report); `burst` opens all at once and shows what that costs.
 */
async function runCase({ openWaits, burst }: { openWaits: number; burst: boolean }) {
  const server = await startServer('matching')
  try {
    await settled(server)
    const order = (i: number) => ({ name: 'bench/order', data: { order: `o-${i}` } })
    if (openWaits > 0 && !burst) {
      await sendAll(server, 1, order)
      await settled(server)
    }
    if (openWaits > 0) {
      const first = burst ? 0 : 1
      await sendAll(server, openWaits - first, (i) => order(first + i))
      await settled(server)
    }
    const waiting = async () => (openWaits > 0 ? (await runsOf(server, 'bench-waiter', 'waiting')).length : 0)
    const atStart = await waiting()
    const nextWait = { k: 0 }
    const phases = []
    for (const phase of PHASES) phases.push({ phase, ...(await measurePhase(server, phase, nextWait)) })
    const atEnd = await waiting()
    const peak = peakRssMb(server.pid)
    await server.stop()
    return { openWaits, burst, atStart, atEnd, phases, peakRssMb: peak, waitKeyRecords: await waitKeyRecords(server) }
  } finally {
    await server.close()
  }
}

type CaseResult = Awaited<ReturnType<typeof runCase>>
const results: CaseResult[] = []
for (const c of cases) results.push(await runCase(c))
const baseline = results.find((r) => r.openWaits === 0)
const label = (r: CaseResult) => `${r.openWaits}${r.burst ? ' (opened at once)' : ''}`
const rows = results.flatMap((r) =>
  r.phases.map((p, i) => ({
    case: label(r),
    'open waits': r.openWaits === 0 ? 0 : `${r.atStart} → ${r.atEnd}`,
    'wait-keys records': r.waitKeyRecords,
    phase: p.phase.name,
    'events/s': p.eventsPerSec,
    matched: p.matched,
    'cpu µs/event': round(p.cpuPerEventUs, 1),
    'matching µs/event': baseline ? round(p.cpuPerEventUs - baseline.phases[i].cpuPerEventUs, 1) : '-',
    'peak RSS MiB': r.peakRssMb,
  })),
)
const delta = (r: (typeof results)[number], phase: number) =>
  baseline ? round(r.phases[phase].cpuPerEventUs - baseline.phases[phase].cpuPerEventUs, 1) : null
report('waits-matching', rows, {
  seconds,
  eventsPerSec: rate,
  matchingUsPerEvent: Object.fromEntries(
    results.filter((r) => r.openWaits > 0).map((r) => [label(r), { noMatch: delta(r, 0), matchShare: delta(r, 1) }]),
  ),
  skipped: results.reduce((sum, r) => sum + r.phases.reduce((s, p) => s + p.skipped, 0), 0),
  cpus: availableParallelism(),
  loadAvg1m: { before: round(loadBefore, 2), after: round(loadavg()[0], 2) },
  targets: { matchingUsPerEvent: 5 },
})
