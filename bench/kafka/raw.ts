// bench/kafka/raw.ts: the two Kafka clients' raw producers on the same records — what Sluice's
// ingest writes (Avro events keyed by env and id), acks=all, idempotent, on the test broker —
// 1 record per awaited send (64 senders) and 500 records per send (16 senders). The ceiling each
// Bus adapter (bus/kafka.ts on kafkajs, bus/kafka-platformatic.ts) can reach.
// Usage: node --conditions=sluice-source bench/kafka/raw.ts [seconds]
import { loadavg } from 'node:os'
import { Kafka, logLevel } from 'kafkajs'
import { Admin, ProduceAcks, Producer, compatibilityPartitioner } from '@platformatic/kafka'
import pino from 'pino'
import { createAvroCodecs } from '../../bus/avro.ts'
import { topicNames } from '../../bus/topics.ts'
import { newUlid } from '../../core/ids.ts'
import { readServicesFile } from '../../tests/infra/services.ts'
import { report } from '../lib.ts'

const seconds = Number(process.argv[2] ?? 10)
const services = readServicesFile()
if (!services) throw new Error('no test services: run node tests/infra/up.ts first')
const brokers = services.kafkaBrokers
const prefix = `benchraw${Date.now().toString(36)}`
const codecs = await createAvroCodecs({ topics: topicNames(prefix) }, pino({ level: 'silent' }))
const loadBefore = loadavg()[0]

const record = (i: number) => {
  const internalId = newUlid()
  const value = codecs.event.encode({
    internalId,
    id: internalId,
    name: 'bench/order.created',
    data: { orderId: `o-${i}`, amount: i, currency: 'EUR' },
    ts: Date.now(),
    env: 'production',
    receivedAt: Date.now(),
    source: { kind: 'api' },
  })
  return { key: `production\0${internalId}`, value }
}

/** Records per second with `concurrency` senders each awaiting sends of `perSend` records. */
async function measure(perSend: number, concurrency: number, send: (n: number) => Promise<void>): Promise<number> {
  let sent = 0
  const deadline = Date.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        await send(perSend)
        sent += perSend
      }
    }),
  )
  return Math.round(sent / seconds)
}

const admin = new Admin({ clientId: 'bench-raw', bootstrapBrokers: brokers })
const topics = { kafkajs: `${prefix}.kafkajs`, platformatic: `${prefix}.platformatic` }
await admin.createTopics({ topics: Object.values(topics), partitions: 4 })

const kafka = new Kafka({ clientId: 'bench-raw', brokers, logLevel: logLevel.NOTHING })
const kjs = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
await kjs.connect()
const sendKafkajs = async (n: number) => {
  await kjs.send({ topic: topics.kafkajs, acks: -1, messages: Array.from({ length: n }, (_, i) => record(i)) })
}

const pk = new Producer({
  clientId: 'bench-raw',
  bootstrapBrokers: brokers,
  idempotent: true,
  acks: ProduceAcks.ALL,
  partitioner: compatibilityPartitioner,
})
const sendPlatformatic = async (n: number) => {
  await pk.send({
    messages: Array.from({ length: n }, (_, i) => {
      const r = record(i)
      return { topic: topics.platformatic, key: Buffer.from(r.key), value: r.value }
    }),
  })
}

const rows: Array<Record<string, string | number>> = []
for (const [client, send] of [
  ['kafkajs 2.2.4', sendKafkajs],
  ['@platformatic/kafka 2.12.1', sendPlatformatic],
] as const) {
  await send(1) // connect, producer id, metadata
  rows.push({ producer: client, case: '1 record/send, 64 in flight', 'records/s': await measure(1, 64, send) })
  rows.push({ producer: client, case: '500 records/send, 16 in flight', 'records/s': await measure(500, 16, send) })
}
await kjs.disconnect()
await pk.close()
await admin.deleteTopics({ topics: Object.values(topics) })
await admin.close()
report('kafka-raw', rows, {
  seconds,
  brokers: brokers.length,
  loadAverage: { before: loadBefore, after: loadavg()[0] },
})
process.exit(0)
