// The short chaos run: distributed Sluice on a 3-broker Kafka and ClickHouse under Event API and
// webhook load, while each role's process and one broker are killed with SIGKILL, once each,
// and restarted. Afterwards every acknowledged event is stored exactly once, every function ran
// once per event (its runs sleep, wait for an event and retry through the kills), no acknowledged
// webhook request is lost, and nothing is stuck. The full run,
// with more kills, is bench/chaos/run.ts. Replay a failure with CHAOS_SEED=<printed seed>.
// On the default Kafka client (@platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t from 'tap'
import { runChaos, countsTable } from './run.ts'
import { chaosSeed } from './random.ts'

// About 3 minutes on an idle 2-core machine; the margin is for a machine others are loading too.
t.setTimeout(480_000)

t.test('kill -9 of every role and of a broker loses nothing and duplicates nothing', async (t) => {
  const result = await runChaos(
    {
      name: 'chaos',
      seed: chaosSeed(process.env.CHAOS_SEED),
      // 7 roles + 1 broker, once each.
      kill: { kills: 8, durationMs: 70_000, maxDownMs: 1500 },
      load: { senders: 3, pauseMs: 60, maxBatch: 10, attempts: 6, requestTimeoutMs: 10_000 },
      settleTimeoutMs: 90_000,
    },
    (line) => t.comment(line),
  )
  for (const row of countsTable(result)) t.comment(`${row.count.padEnd(30)} ${row.value}`)
  if (result.keptDir) t.comment(`node logs and side effects kept in ${result.keptDir}`)
  const c = result.verdict.counts
  t.same(
    Object.values(result.killsByTarget).every((n) => n >= 1),
    true,
    'every role and a broker were killed',
  )
  t.ok(c.acknowledged > 500, `load kept flowing through the kills (${c.acknowledged} acknowledged)`)
  t.equal(c.lost, 0, 'every acknowledged event is stored')
  t.equal(c.duplicates, 0, 'no event is stored twice as an original')
  t.ok(c.webhookRequestsAcknowledged > 20, 'webhook requests were acknowledged')
  t.equal(c.webhookRequestsLost, 0, 'every acknowledged webhook request is stored with its event')
  t.equal(c.runsMissing, 0, 'every function ran for every original event')
  t.equal(c.runsUnexpected, 0, 'no function ran for a duplicate')
  t.equal(c.runsNotCompleted, 0, 'every run completed: parked retries, sleeping and waiting runs included')
  t.ok(c.waitsResumed > 0, `waits were resumed by their event through the kills (${c.waitsResumed})`)
  t.equal(c.sentEventsMissing, 0, 'every step.sendEvent reached the store')
  t.equal(c.stepsNeverRun, 0, 'every step of every completed run executed')
  t.equal(c.stepsRunMoreThanTwice, 0, 'no step executed more than twice')
  t.equal(c.consumerLag, 0, 'every consumer group drained')
  t.same(result.verdict.examples, {}, 'no example of any failure')
})
