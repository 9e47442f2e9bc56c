// One chaos run: start the cluster, run load while the killer works through its schedule, stop
// the load, wait for the pipeline to settle, verify. Shared by the short form in the test
// command (chaos.test.ts) and the full run (bench/chaos/run.ts).
import { startChaosCluster } from './cluster.ts'
import { startLoad, type LoadOptions, type LoadTally } from './load.ts'
import { KILL_TARGETS, runKills, type Kill, type KillOptions } from './killer.ts'
import { seededRandom } from './random.ts'
import { verdictClean, verifyWhenSettled, type Verdict } from './verify.ts'

export interface ChaosOptions {
  seed: number
  kill: KillOptions
  load: LoadOptions
  settleTimeoutMs: number
  name: string
}

export interface ChaosResult {
  seed: number
  verdict: Verdict & { settleMs: number }
  kills: Kill[]
  killsByTarget: Record<string, number>
  load: Omit<LoadTally, 'events' | 'webhookRequests'>
  wallMs: number
  /** Node logs and side effects, kept when the run did not settle clean. */
  keptDir?: string
}

export async function runChaos(options: ChaosOptions, log: (line: string) => void): Promise<ChaosResult> {
  const started = Date.now()
  log(`chaos seed ${options.seed} (replay with CHAOS_SEED=${options.seed})`)
  const cluster = await startChaosCluster(options.name)
  log(`cluster up in ${Date.now() - started} ms: 3 brokers, ${cluster.kafka.brokers.join(',')}; logs in ${cluster.dir}`)
  let clean = false
  try {
    // Two streams, so the kill order and gaps replay exactly whatever the load's timing does.
    const load = startLoad(
      { ingestUrl: () => cluster.url('ingest'), eventKey: cluster.eventKey, webhookId: cluster.webhookId },
      seededRandom(options.seed ^ 0x9e3779b9),
      options.load,
    )
    const kills = await runKills(cluster, seededRandom(options.seed), options.kill, log).catch(async (error) => {
      await load.stop()
      throw error
    })
    // A moment of load after the last restart, so the last-restarted role is exercised too.
    await new Promise((r) => setTimeout(r, 3000))
    const tally = await load.stop()
    const acknowledged = `${tally.events.size} events and ${tally.webhookRequests.size} webhook requests`
    log(`load stopped: ${acknowledged} acknowledged; settling`)
    const verdict = await verifyWhenSettled(cluster, tally, options.settleTimeoutMs)
    if (cluster.unexpectedExits.length > 0) verdict.examples.unexpectedExits = cluster.unexpectedExits
    const killsByTarget = Object.fromEntries(KILL_TARGETS.map((t) => [t, kills.filter((k) => k.target === t).length]))
    const { events: _events, webhookRequests: _requests, ...loadCounts } = tally
    clean = verdictClean(verdict, cluster.unexpectedExits)
    return {
      seed: options.seed,
      verdict,
      kills,
      killsByTarget,
      load: loadCounts,
      wallMs: Date.now() - started,
      ...(!clean && { keptDir: cluster.dir }),
    }
  } finally {
    const stopping = Date.now()
    await cluster.stop({ keepDir: !clean })
    log(`cluster stopped in ${Date.now() - stopping} ms`)
  }
}

/** The counts as one flat table: what the full run prints and the closing note quotes. */
export function countsTable(result: ChaosResult): Array<{ count: string; value: number }> {
  return [
    ...Object.entries(result.verdict.counts).map(([count, value]) => ({ count, value })),
    ...Object.entries(result.killsByTarget).map(([target, value]) => ({ count: `kills: ${target}`, value })),
    { count: 'kills: total', value: result.kills.length },
    ...Object.entries(result.load.outcomes).map(([status, value]) => ({ count: `requests answered ${status}`, value })),
    { count: 'request retries (same seed)', value: result.load.retries },
    { count: 'settle ms', value: result.verdict.settleMs },
    { count: 'wall ms', value: result.wallMs },
  ]
}
