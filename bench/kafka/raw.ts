// The two Kafka clients' raw producers on the same records — what Sluice's ingest writes (Avro
// events keyed by env and id), acks=all, idempotent — 1 record per awaited send (64 senders) and
// 500 records per send (16 senders): the ceiling the Kafka Bus can reach on each client
// (bus/kafka-kafkajs*.ts, bus/kafka-platformatic*.ts). @platformatic/kafka's 500-record sends are also measured
// with lz4 and zstd compression (SLUICE_KAFKA_COMPRESSION), with the size a batch's values shrink
// to. bench/kafka/run.ts runs it beside Sluice's ingest; alone:
// node --conditions=sluice-source bench/kafka/raw.ts [seconds]  (after node tests/infra/up.ts)
import { Kafka, logLevel } from 'kafkajs'
import {
  Admin,
  ProduceAcks,
  Producer,
  compatibilityPartitioner,
  compressionsAlgorithms,
  type CompressionAlgorithmValue,
} from '@platformatic/kafka'
import pino from 'pino'
import { createAvroCodecs } from '../../bus/avro.ts'
import { topicNames } from '../../bus/topics.ts'
import { newUlid } from '../../core/ids.ts'
import { readServicesFile } from '../../tests/infra/services.ts'
import { report } from '../lib.ts'

export type KafkaClientName = 'kafkajs' | 'platformatic'

export interface RawResult {
  client: KafkaClientName
  perSend: 1 | 500
  compression: CompressionAlgorithmValue
  recordsPerSec: number
  /** Compressed size of 500 records' values over their size. */
  sizeRatio?: number
}

/** Records per second of each client's producer, 1 and 500 records per send, on fresh 4-partition topics. */
export async function rawProducers(brokers: string[], seconds: number): Promise<RawResult[]> {
  const prefix = `benchraw${Date.now().toString(36)}`
  const codecs = await createAvroCodecs({ topics: topicNames(prefix) }, pino({ level: 'silent' }))
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
  const measure = async (perSend: number, concurrency: number, send: (n: number) => Promise<void>) => {
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
  const platformatic = (compression: CompressionAlgorithmValue) =>
    new Producer({
      clientId: 'bench-raw',
      bootstrapBrokers: brokers,
      idempotent: true,
      acks: ProduceAcks.ALL,
      partitioner: compatibilityPartitioner,
      compression,
    })
  const sendWith =
    (producer: Producer<Buffer, Buffer, Buffer, Buffer>) =>
    async (n: number): Promise<void> => {
      await producer.send({
        messages: Array.from({ length: n }, (_, i) => {
          const r = record(i)
          return { topic: topics.platformatic, key: Buffer.from(r.key), value: r.value }
        }),
      })
    }
  const pk = platformatic('none')
  const senders: Record<KafkaClientName, (n: number) => Promise<void>> = {
    kafkajs: async (n) => {
      await kjs.send({ topic: topics.kafkajs, acks: -1, messages: Array.from({ length: n }, (_, i) => record(i)) })
    },
    platformatic: sendWith(pk),
  }
  const results: RawResult[] = []
  for (const client of ['kafkajs', 'platformatic'] as const) {
    await senders[client](1) // connect, producer id, metadata
    results.push({ client, perSend: 1, compression: 'none', recordsPerSec: await measure(1, 64, senders[client]) })
    results.push({ client, perSend: 500, compression: 'none', recordsPerSec: await measure(500, 16, senders[client]) })
  }
  const values = Buffer.concat(Array.from({ length: 500 }, (_, i) => record(i).value))
  for (const compression of ['lz4', 'zstd'] as const) {
    const producer = platformatic(compression)
    const send = sendWith(producer)
    await send(1)
    const recordsPerSec = await measure(500, 16, send)
    const sizeRatio = compressionsAlgorithms[compression].compressSync(values).length / values.length
    results.push({ client: 'platformatic', perSend: 500, compression, recordsPerSec, sizeRatio })
    await producer.close()
  }
  await kjs.disconnect()
  await pk.close()
  await admin.deleteTopics({ topics: Object.values(topics) })
  await admin.close()
  return results
}

if (import.meta.main) {
  const seconds = Number(process.argv[2] ?? 10)
  const services = readServicesFile()
  if (!services) throw new Error('no test services: run node tests/infra/up.ts first')
  const results = await rawProducers(services.kafkaBrokers, seconds)
  report(
    'kafka-raw',
    results.map((r) => ({
      producer: r.client,
      case: r.perSend === 1 ? '1 record/send, 64 in flight' : '500 records/send, 16 in flight',
      compression: r.compression,
      'records/s': r.recordsPerSec,
      'size ratio': r.sizeRatio === undefined ? '-' : Math.round(r.sizeRatio * 100) / 100,
    })),
    { seconds, brokers: services.kafkaBrokers.length },
  )
  process.exit(0)
}
