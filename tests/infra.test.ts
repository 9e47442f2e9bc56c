// Proves the test infrastructure is real: the shared Kafka and ClickHouse from
// up.ts answer real clients, Chromium renders a page, and a 3-broker cluster
// keeps accepting acks=all writes with one broker killed.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { createClient } from '@clickhouse/client'
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs'
import { launchChromium } from './infra/chromium.ts'
import { startKafka } from './infra/kafka.ts'
import { testServices } from './infra/services.ts'

const unique = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`

type Received = { key: string; value: string; partition: number }

/** Reads `count` messages of `topic` with a fresh consumer group, from the beginning. */
async function consumeAll(kafka: Kafka, topic: string, count: number): Promise<Received[]> {
  const consumer = kafka.consumer({ groupId: unique('infra-group'), sessionTimeout: 6000, heartbeatInterval: 500 })
  const received: Received[] = []
  await consumer.connect()
  try {
    await consumer.subscribe({ topic, fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${received.length} of ${count}`)), 60_000)
      consumer
        .run({
          eachMessage: async ({ partition, message }: { partition: number; message: KafkaMessage }) => {
            received.push({ key: String(message.key), value: String(message.value), partition })
            if (received.length >= count) {
              clearTimeout(timer)
              resolve()
            }
          },
        })
        .catch(reject)
    })
  } finally {
    await consumer.disconnect()
  }
  return received
}

t.test('shared Kafka: idempotent acks=-1 producer and a consumer group see every keyed message', async (t) => {
  const kafka = new Kafka({ clientId: 'infra-test', brokers: testServices().kafkaBrokers, logLevel: logLevel.ERROR })
  const admin = kafka.admin()
  await admin.connect()
  t.teardown(() => admin.disconnect())
  const topic = unique('infra-events')
  t.equal(
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true }),
    true,
    'topic created',
  )
  const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics
  t.equal(metadata.partitions.length, 3, 'three partitions')

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const messages = Array.from({ length: 30 }, (_, i) => ({ key: `user-${i % 5}`, value: `event-${i}` }))
  const results = await producer.send({ topic, acks: -1, messages })
  await producer.disconnect()
  t.equal(results.length > 0 && results.every((r) => r.errorCode === 0), true, 'every partition acknowledged')

  const received = await consumeAll(kafka, topic, messages.length)
  t.same(received.map((m) => m.value).sort(), messages.map((m) => m.value).sort(), 'all 30 values consumed once')
  const partitionsByKey = new Map<string, Set<number>>()
  for (const m of received) partitionsByKey.set(m.key, (partitionsByKey.get(m.key) ?? new Set()).add(m.partition))
  t.same(
    [...partitionsByKey.values()].map((s) => s.size),
    [1, 1, 1, 1, 1],
    'each key stays on one partition',
  )
})

t.test('shared Kafka: a compacted topic can be created and reports cleanup.policy=compact', async (t) => {
  const kafka = new Kafka({ clientId: 'infra-test', brokers: testServices().kafkaBrokers, logLevel: logLevel.ERROR })
  const admin = kafka.admin()
  await admin.connect()
  t.teardown(() => admin.disconnect())
  const topic = unique('infra-compacted')
  await admin.createTopics({
    topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }],
    waitForLeaders: true,
  })
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: 2 /* TOPIC */, name: topic, configNames: ['cleanup.policy'] }],
  })
  t.equal(described.resources[0].configEntries[0].configValue, 'compact')
})

t.test('shared ClickHouse: JSONEachRow rows go into a ReplacingMergeTree and come back', async (t) => {
  const client = createClient({ url: testServices().clickhouseUrl })
  t.teardown(() => client.close())
  const table = unique('infra_events')
  // Plain SQL with no query_params or async_insert: Debian's 18.16 supports neither.
  await client.command({
    query: `CREATE TABLE ${table} (id String, payload String, version UInt64) ENGINE = ReplacingMergeTree(version) ORDER BY id`,
  })
  t.teardown(() => client.command({ query: `DROP TABLE IF EXISTS ${table}` }))
  await client.insert({
    table,
    format: 'JSONEachRow',
    values: [
      { id: 'a', payload: 'first', version: 1 },
      { id: 'b', payload: 'only', version: 1 },
      { id: 'a', payload: 'second', version: 2 },
    ],
  })
  const rows = await client.query({
    query: `SELECT id, payload FROM ${table} FINAL ORDER BY id`,
    format: 'JSONEachRow',
  })
  t.same(
    await rows.json(),
    [
      { id: 'a', payload: 'second' },
      { id: 'b', payload: 'only' },
    ],
    'latest version per id',
  )
})

t.test('Chromium opens a data: URL page and reads its title', async (t) => {
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  await page.goto('data:text/html,<title>sluice infra</title><p>hello</p>')
  t.equal(await page.title(), 'sluice infra')
  t.equal(await page.textContent('p'), 'hello')
})

t.test('3-broker cluster keeps taking acks=all writes with one broker killed', { timeout: 240_000 }, async (t) => {
  const startedAt = Date.now()
  const cluster = await startKafka({ brokers: 3 })
  t.teardown(() => cluster.stop())
  t.comment(`3-broker cluster started in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`)
  t.equal(cluster.brokers.length, 3)

  const kafka = new Kafka({ clientId: 'infra-failover', brokers: cluster.brokers, logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  t.teardown(() => admin.disconnect())
  t.equal((await admin.describeCluster()).brokers.length, 3, 'three brokers registered')
  const topic = unique('infra-replicated')
  await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: false })
  await cluster.waitForTopic(topic, 3)
  const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics
  t.same(
    metadata.partitions.map((p) => p.replicas.length),
    [3, 3, 3],
    'replication factor 3',
  )

  await cluster.stopBroker(1, { signal: 'SIGKILL' })
  // Retries cover the seconds until the controller fences the dead broker and
  // moves its partition leaderships, as a production client's would.
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: 10, initialRetryTime: 300 },
  })
  await producer.connect()
  const messages = Array.from({ length: 12 }, (_, i) => ({ key: `k${i % 4}`, value: `after-kill-${i}` }))
  const results = await producer.send({ topic, acks: -1, messages })
  await producer.disconnect()
  t.equal(
    results.every((r) => r.errorCode === 0),
    true,
    'acks=all writes succeed with 2 of 3 in sync',
  )
  const received = await consumeAll(kafka, topic, messages.length)
  t.same(received.map((m) => m.value).sort(), messages.map((m) => m.value).sort(), 'written messages readable')

  await cluster.startBroker(1)
  t.equal((await admin.describeCluster()).brokers.length, 3, 'killed broker rejoined on its old port')
})
