// bench/faults: the full fault run (issue 52). Distributed Sluice (a process per role) on a private
// 3-broker Kafka and the test ClickHouse, every connection to a broker and to ClickHouse through
// Toxiproxy, under Event API and webhook load; each fault of tests/faults/faults.ts in turn, then
// the chaos checks. Prints JSON and a table per fault (acknowledged, stored, lost, duplicated,
// stranded, 503s, readiness, ingest RSS, recovery seconds); exits 1 when anything was lost,
// duplicated or stranded, or a fault did not recover within 10 s. Needs the test services (`node tests/infra/up.ts`).
// Usage: node --no-node-snapshot --conditions=sluice-source bench/faults/run.ts
//          [--client platformatic|kafkajs] [--faults kafka-latency,clickhouse-gone] [--scale 1] [--seed N]
import { parseArgs } from 'node:util'
import { loadavg } from 'node:os'
import { report } from '../lib.ts'
import { runFaults } from '../../tests/faults/run.ts'
import { faults } from '../../tests/faults/faults.ts'
import { chaosSeed } from '../../tests/chaos/random.ts'
import type { KafkaClientName } from '../../bus/kafka-clients.ts'

const { values } = parseArgs({
  options: {
    client: { type: 'string', default: 'platformatic' },
    faults: { type: 'string', default: '' },
    scale: { type: 'string', default: '1' },
    seed: { type: 'string', default: process.env.CHAOS_SEED ?? '' },
  },
})
const wanted = values.faults.split(',').filter(Boolean)
const chosen = faults(Number(values.scale)).filter((f) => wanted.length === 0 || wanted.includes(f.name))
const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`)

const result = await runFaults(
  {
    name: 'faultbench',
    seed: chaosSeed(values.seed),
    faults: chosen,
    kafkaClient: values.client as KafkaClientName,
    load: { senders: 2, pauseMs: 80, maxBatch: 10, attempts: 8, requestTimeoutMs: 10_000 },
    recoveryTimeoutMs: 60_000,
    settleTimeoutMs: 180_000,
  },
  log,
)
/** Issue 52: latency back at its baseline (and every /readyz 200) within 10 s of a fault's end. */
const RECOVERY_TARGET_S = 10
const slow = result.rows.filter((r) => r.recoverySeconds > RECOVERY_TARGET_S).map((r) => r.fault)
const clean = result.keptDir === undefined && slow.length === 0
report(
  `faults-${result.kafkaClient}`,
  result.rows.map((r) => ({ ...r })),
  {
    seed: result.seed,
    clean,
    recoveryTargetSeconds: RECOVERY_TARGET_S,
    slowToRecover: slow,
    baselineProbeMs: result.baselineProbeMs,
    loadAverage1m: loadavg()[0],
    counts: result.verdict.counts,
    examples: result.verdict.examples,
    unexpectedExits: result.unexpectedExits,
    ...(result.keptDir && { keptDir: result.keptDir }),
  },
)
if (slow.length > 0) log(`recovered later than ${RECOVERY_TARGET_S} s: ${slow.join(', ')}`)
if (result.keptDir) log(`NOT CLEAN: see counts and examples in the JSON, logs in ${result.keptDir}`)
process.exit(clean ? 0 : 1)
