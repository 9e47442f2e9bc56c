// One fault run: a chaos cluster (tests/chaos/cluster.ts) whose every connection to a broker and to
// ClickHouse goes through Toxiproxy, then each fault in turn under steady load: set it, hold it, heal
// it, and time the recovery (probe latency back to its baseline and every /readyz 200). When the
// last fault healed the load stops, the pipeline settles, and the chaos checks (tests/chaos/verify.ts)
// judge the whole run and each fault's phase. Shared by the short form in npm test
// (faults.test.ts) and the full run (bench/faults/run.ts).
import { readFile } from 'node:fs/promises'
import { startChaosCluster, type ChaosCluster, type ClusterRole } from '../chaos/cluster.ts'
import { startLoad, type LoadOptions, type LoadTally } from '../chaos/load.ts'
import { seededRandom } from '../chaos/random.ts'
import { verdictClean, verify, verifyWhenSettled, type Verdict } from '../chaos/verify.ts'
import { startToxiproxy } from '../infra/toxiproxy.ts'
import type { KafkaClientName } from '../../bus/kafka-clients.ts'
import type { Fault } from './faults.ts'

export interface FaultRunOptions {
  name: string
  seed: number
  faults: Fault[]
  load: LoadOptions
  kafkaClient?: KafkaClientName
  /** How long a fault's recovery may take before the run gives up on it (it counts as not recovered). */
  recoveryTimeoutMs: number
  settleTimeoutMs: number
}

export interface FaultRow {
  fault: string
  seconds: number
  acknowledged: number
  stored: number
  lost: number
  duplicated: number
  /** Runs of the phase's events missing or not completed, and events their steps did not send. */
  stranded: number
  /** 503 answers to the load, and those without Retry-After. */
  unavailable: number
  unavailableWithoutRetryAfter: number
  /** Roles whose /readyz answered 503 while the fault lasted. */
  notReady: string
  /** Peak RSS of the ingest process while the fault lasted and recovered. */
  ingestPeakRssMiB: number
  /** From heal to probe latency back at baseline with every /readyz 200; -1 when not within the timeout. */
  recoverySeconds: number
}

export interface FaultRunResult {
  seed: number
  kafkaClient: string
  baselineProbeMs: number
  rows: FaultRow[]
  verdict: Verdict & { settleMs: number }
  unexpectedExits: string[]
  keptDir?: string
}

interface Probe {
  at: number
  ms: number
  ok: boolean
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Single events and /readyz of every role, sampled until stopped, with the ingest process's RSS. */
function monitor(cluster: ChaosCluster) {
  const probes: Probe[] = []
  const readiness: Array<{ at: number; notReady: ClusterRole[] }> = []
  const rss: Array<{ at: number; kib: number }> = []
  let stopping = false
  const probeLoop = (async () => {
    for (let n = 0; !stopping; n++) {
      const at = Date.now()
      const ok = await fetch(`${cluster.url('ingest')}/e/${cluster.eventKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'chaos/probe', data: { n } }),
        signal: AbortSignal.timeout(5000),
      })
        .then((r) => r.status === 200)
        .catch(() => false)
      probes.push({ at, ms: Date.now() - at, ok })
      await sleep(200)
    }
  })()
  const readyLoop = (async () => {
    while (!stopping) {
      const at = Date.now()
      const answers = await Promise.all(
        cluster.roles.map(async (role) => {
          const ready = await fetch(`${cluster.opsUrl(role)}/readyz`, { signal: AbortSignal.timeout(3000) })
            .then((r) => r.status === 200)
            .catch(() => false)
          return ready ? undefined : role
        }),
      )
      readiness.push({ at, notReady: answers.filter((r) => r !== undefined) })
      const status = await readFile(`/proc/${cluster.pid('ingest')}/status`, 'utf8').catch(() => '')
      const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
      rss.push({ at, kib })
      await sleep(500)
    }
  })()
  return {
    probes,
    readiness,
    rss,
    async stop() {
      stopping = true
      await Promise.all([probeLoop, readyLoop])
    },
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

function mergeTallies(tallies: LoadTally[]): LoadTally {
  const merged: LoadTally = {
    events: new Map(tallies.flatMap((t) => [...t.events])),
    webhookRequests: new Map(tallies.flatMap((t) => [...t.webhookRequests])),
    requests: { 'single-id': 0, single: 0, 'batch-id': 0, batch: 0, webhook: 0 },
    outcomes: {},
    retries: 0,
    unavailable: 0,
    unavailableWithoutRetryAfter: 0,
  }
  for (const t of tallies) {
    for (const [k, v] of Object.entries(t.requests)) merged.requests[k as keyof LoadTally['requests']] += v
    for (const [k, v] of Object.entries(t.outcomes)) merged.outcomes[k] = (merged.outcomes[k] ?? 0) + v
    merged.retries += t.retries
    merged.unavailable += t.unavailable
    merged.unavailableWithoutRetryAfter += t.unavailableWithoutRetryAfter
  }
  return merged
}

export async function runFaults(options: FaultRunOptions, log: (line: string) => void): Promise<FaultRunResult> {
  const toxiproxy = await startToxiproxy()
  let cluster: ChaosCluster | undefined
  let clean = false
  try {
    cluster = await startChaosCluster(options.name, {
      toxiproxy,
      kafkaClient: options.kafkaClient,
      isolatedRunner: options.faults.some((f) => f.isolatedRunner),
      schemaRegistry: options.faults.some((f) => f.schemaRegistry),
    })
    const c = cluster
    log(`cluster up behind toxiproxy (${[...c.proxies.keys()].join(', ')}); logs in ${c.dir}`)
    const random = seededRandom(options.seed)
    const target = { ingestUrl: () => c.url('ingest'), eventKey: c.eventKey, webhookId: c.webhookId }
    const watch = monitor(c)
    const phases: Array<{ fault: Fault; tally: LoadTally; started: number; healed: number; recovered: number }> = []
    try {
      // The baseline: 10 s of the same load, no fault.
      const warm = startLoad(target, random, options.load)
      await sleep(10_000)
      const baselineTally = await warm.stop()
      const baselineProbeMs = median(watch.probes.filter((p) => p.ok).map((p) => p.ms))
      const recoveredMs = Math.max(3 * baselineProbeMs, baselineProbeMs + 100)
      log(`baseline: probe ${baselineProbeMs} ms; recovered means 3 probes in a row within ${recoveredMs} ms`)
      for (const fault of options.faults) {
        const load = startLoad(target, random, options.load)
        await sleep(3000)
        const started = Date.now()
        log(`${fault.name}: ${fault.what}, for ${fault.durationMs / 1000} s`)
        const heal = await fault.start(c)
        await sleep(fault.durationMs)
        await heal()
        const healed = Date.now()
        let recovered = -1
        while (Date.now() - healed < options.recoveryTimeoutMs) {
          await sleep(500)
          const after = watch.probes.filter((p) => p.at >= healed)
          const run = after.findIndex(
            (_, i) => i + 3 <= after.length && after.slice(i, i + 3).every((p) => p.ok && p.ms <= recoveredMs),
          )
          const lastReadiness = watch.readiness.at(-1)
          if (run >= 0 && lastReadiness && lastReadiness.at > healed && lastReadiness.notReady.length === 0) {
            const ready = watch.readiness.find(
              (r, i, all) => r.at > healed && all.slice(i).every((s) => !s.notReady.length),
            )
            recovered = Math.max(after[run].at, ready?.at ?? 0)
            break
          }
        }
        log(
          `${fault.name}: healed; ${recovered < 0 ? 'NOT recovered' : `recovered in ${(recovered - healed) / 1000} s`}`,
        )
        await sleep(3000)
        phases.push({ fault, tally: await load.stop(), started, healed, recovered })
      }
      // The probes stop too: one in flight is lag the checks would wait on.
      await watch.stop()
      const all = mergeTallies([baselineTally, ...phases.map((p) => p.tally)])
      log(
        `load stopped: ${all.events.size} events, ${all.webhookRequests.size} webhook requests acknowledged; settling`,
      )
      const verdict = await verifyWhenSettled(c, all, options.settleTimeoutMs)
      const rows: FaultRow[] = []
      for (const phase of phases) {
        const counts = (await verify(c, phase.tally, true)).counts
        const during = watch.readiness.filter((r) => r.at >= phase.started && r.at <= phase.healed)
        const rss = watch.rss.filter(
          (r) => r.at >= phase.started && r.at <= (phase.recovered > 0 ? phase.recovered : Date.now()),
        )
        rows.push({
          fault: phase.fault.name,
          seconds: phase.fault.durationMs / 1000,
          acknowledged: counts.acknowledged,
          stored: counts.stored,
          lost: counts.lost + counts.webhookRequestsLost,
          duplicated: counts.duplicates,
          stranded: counts.runsMissing + counts.runsNotCompleted + counts.sentEventsMissing,
          unavailable: phase.tally.unavailable,
          unavailableWithoutRetryAfter: phase.tally.unavailableWithoutRetryAfter,
          notReady: [...new Set(during.flatMap((r) => r.notReady))].join(' ') || '-',
          ingestPeakRssMiB: Math.round(Math.max(0, ...rss.map((r) => r.kib)) / 1024),
          recoverySeconds: phase.recovered < 0 ? -1 : (phase.recovered - phase.healed) / 1000,
        })
      }
      clean = verdictClean(verdict, c.unexpectedExits) && rows.every((r) => r.recoverySeconds >= 0)
      return {
        seed: options.seed,
        kafkaClient: options.kafkaClient ?? 'default',
        baselineProbeMs,
        rows,
        verdict,
        unexpectedExits: c.unexpectedExits,
        ...(!clean && { keptDir: c.dir }),
      }
    } finally {
      await watch.stop()
    }
  } finally {
    await cluster?.stop({ keepDir: !clean })
    await toxiproxy.stop()
  }
}
