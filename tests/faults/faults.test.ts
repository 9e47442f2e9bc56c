// The short fault run: distributed Sluice with every connection to a broker and to ClickHouse
// through Toxiproxy, under Event API and webhook load, through five network faults at a third of
// their full length: latency on every broker, a black hole in front of every broker, one broker cut
// off from clients and quorum, one of two runners cut off from Kafka while it keeps running,
// ClickHouse gone. Afterwards nothing acknowledged is lost,
// duplicated or stranded, each fault recovered, /readyz said so while a dependency was away, and
// ingest answered 503s with Retry-After. The full run, every fault at full length on both Kafka
// clients, is bench/faults/run.ts. On the default client (SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t from 'tap'
import { runFaults } from './run.ts'
import { faults } from './faults.ts'
import { chaosSeed } from '../chaos/random.ts'
import { kafkaClient } from '../helpers/kafka-bus.ts'

t.setTimeout(600_000)

const SHORT = ['kafka-latency', 'kafka-black-hole', 'broker-cut-off', 'runner-cut-off', 'clickhouse-gone']

t.test('network faults lose, duplicate and strand nothing, and each recovers', async (t) => {
  const result = await runFaults(
    {
      name: 'faults',
      seed: chaosSeed(process.env.CHAOS_SEED),
      faults: faults(1 / 3).filter((f) => SHORT.includes(f.name)),
      kafkaClient,
      load: { senders: 2, pauseMs: 80, maxBatch: 10, attempts: 8, requestTimeoutMs: 10_000 },
      recoveryTimeoutMs: 60_000,
      settleTimeoutMs: 120_000,
    },
    (line) => t.comment(line),
  )
  for (const row of result.rows) t.comment(JSON.stringify(row))
  if (result.keptDir) t.comment(`node logs kept in ${result.keptDir}`)
  const unreachable = new Set(
    faults()
      .filter((f) => f.unreachable)
      .map((f) => f.name),
  )
  for (const row of result.rows) {
    t.ok(row.acknowledged > 0, `${row.fault}: load was acknowledged (${row.acknowledged})`)
    t.equal(row.lost, 0, `${row.fault}: nothing acknowledged is lost`)
    t.equal(row.duplicated, 0, `${row.fault}: nothing is stored twice`)
    t.equal(row.stranded, 0, `${row.fault}: no run is stranded`)
    t.ok(row.recoverySeconds >= 0, `${row.fault}: recovered (${row.recoverySeconds} s)`)
    t.equal(row.unavailableWithoutRetryAfter, 0, `${row.fault}: every 503 carries Retry-After`)
    t.ok(row.ingestPeakRssMiB < 512, `${row.fault}: ingest RSS stays bounded (${row.ingestPeakRssMiB} MiB)`)
    if (unreachable.has(row.fault)) t.not(row.notReady, '-', `${row.fault}: /readyz answered 503 while it lasted`)
    if (row.fault === 'clickhouse-gone')
      t.same(
        row.notReady.split(' ').filter((role) => !['transformer', 'sink', 'api'].includes(role)),
        [],
        'ClickHouse away takes only the roles that use it out of service',
      )
  }
  const c = result.verdict.counts
  t.equal(c.lost + c.webhookRequestsLost, 0, 'the whole run lost nothing')
  t.equal(c.duplicates + c.runsUnexpected, 0, 'the whole run duplicated nothing')
  t.equal(c.runsMissing + c.runsNotCompleted, 0, 'every run of the whole run completed')
  t.equal(c.stepsRunMoreThanTwice, 0, 'no step executed more than twice')
  t.equal(c.consumerLag, 0, 'every consumer group drained')
  t.same(result.unexpectedExits, [], 'no process exited by itself')
  t.same(result.verdict.examples, {}, 'no example of any failure')
})
