// bench/chaos: the full chaos run. Distributed Sluice (a process per role) on a private 3-broker
// Kafka and the test ClickHouse, under Event API and webhook load, while roles and brokers are
// killed with SIGKILL one at a time and restarted; then the checks of tests/chaos/verify.ts.
// Prints JSON and a table of counts; exits 1 when anything was lost, duplicated or stuck.
// Needs the test services (`node tests/infra/up.ts`) for ClickHouse. The nodes run on the default
// Kafka client, @platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs runs them on kafkajs.
// Usage: node --no-node-snapshot --conditions=sluice-source bench/chaos/run.ts
//          [--duration-s 600] [--kills 24] [--seed N] [--senders 3] [--pause-ms 60]
// (CHAOS_SEED=N works too; a run prints its seed, and the same seed replays its kill order and gaps.)
import { parseArgs } from 'node:util'
import { loadavg } from 'node:os'
import { report } from '../lib.ts'
import { runChaos, countsTable } from '../../tests/chaos/run.ts'
import { chaosSeed } from '../../tests/chaos/random.ts'

const { values } = parseArgs({
  options: {
    'duration-s': { type: 'string', default: '600' },
    kills: { type: 'string', default: '24' },
    seed: { type: 'string', default: process.env.CHAOS_SEED ?? '' },
    senders: { type: 'string', default: '3' },
    'pause-ms': { type: 'string', default: '60' },
  },
})
const kills = Number(values.kills)
const durationMs = Number(values['duration-s']) * 1000
const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`)

const result = await runChaos(
  {
    name: 'chaosbench',
    seed: chaosSeed(values.seed),
    kill: { kills, durationMs, maxDownMs: 3000 },
    load: {
      senders: Number(values.senders),
      pauseMs: Number(values['pause-ms']),
      maxBatch: 20,
      attempts: 6,
      requestTimeoutMs: 10_000,
    },
    settleTimeoutMs: 180_000,
  },
  log,
)

const c = result.verdict.counts
const clean = result.keptDir === undefined
report('chaos', countsTable(result), {
  seed: result.seed,
  clean,
  loadAverage1m: loadavg()[0],
  kills: result.kills,
  examples: result.verdict.examples,
  ...(result.keptDir && { keptDir: result.keptDir }),
})
if (!clean) {
  const what = `lost ${c.lost}, duplicates ${c.duplicates}, webhook requests lost ${c.webhookRequestsLost}`
  log(`NOT CLEAN: ${what}; see examples in the JSON, logs in ${result.keptDir}`)
}
process.exit(clean ? 0 : 1)
