// The kafkajs adapter's producer (bus/kafka-kafkajs-producer.ts) under the core's publisher: a send
// kafkajs reports successful is trusted only if every partition it put a record on answered.
// kafkajs 2.2.4 can resolve `sendBatch` without writing a partition: a broker answers "not the
// leader", the partition's new leader already answered for other partitions of the same send, and
// the retry skips it (sendMessages keeps one response per broker). The chaos run lost 15 webhook
// events that way while their requests were recorded delivered. Here a fake client does what
// kafkajs did there: it reports success and leaves one partition unwritten.
import t from 'tap'
import pino from 'pino'
import type { PartitionMetadata, ProducerBatch, ProducerConfig, RecordMetadata } from 'kafkajs'
import { createKafkaPublisher } from '../../bus/kafka-publisher.ts'
import { createKafkajsProducer, type ProducerFactory } from '../../bus/kafka-kafkajs-producer.ts'

const log = pino({ level: 'silent' })
const PARTITIONS = 4
const partitionMetadata: PartitionMetadata[] = Array.from({ length: PARTITIONS }, (_, partitionId) => ({
  partitionErrorCode: 0,
  partitionId,
  leader: 1,
  replicas: [1],
  isr: [1],
}))

/** Producers that place records with the publisher's partitioner; the first `lossy` of them drop one partition. */
class FakeKafka implements ProducerFactory {
  written: Array<{ topic: string; partition: number; key: string }> = []
  producers = 0
  private lossy: number
  constructor(lossy: number) {
    this.lossy = lossy
  }

  producer(config: ProducerConfig) {
    const lossy = this.producers++ < this.lossy
    const partitioner = config.createPartitioner!()
    const sendBatch = async (batch: ProducerBatch): Promise<RecordMetadata[]> => {
      const placed = (batch.topicMessages ?? []).flatMap(({ topic, messages }) =>
        messages.map((message) => ({
          topic,
          key: String(message.key),
          partition: partitioner({ topic, partitionMetadata, message }),
        })),
      )
      // What kafkajs did: the partition whose leader moved is never sent, and the send succeeds.
      const dropped = lossy ? placed[0].partition : undefined
      const kept = placed.filter((p) => p.partition !== dropped)
      this.written.push(...kept)
      const answered = new Map(kept.map((p) => [`${p.topic}/${p.partition}`, p]))
      return [...answered.values()].map((p) => ({ topicName: p.topic, partition: p.partition, errorCode: 0 }))
    }
    return { connect: async () => {}, disconnect: async () => {}, sendBatch }
  }
}

const records = Array.from({ length: 40 }, (_, n) => ({ key: `key-${n}`, value: `value-${n}` }))

t.test('a send that left a partition unwritten fails, and the next one, on a new producer, writes it', async (t) => {
  const kafka = new FakeKafka(1)
  const publisher = createKafkaPublisher(() => createKafkajsProducer(kafka, { compression: 'none' }), log)
  t.teardown(() => publisher.close())

  await t.rejects(publisher.publish('incoming', records), { code: 'LOG_UNAVAILABLE' })
  const firstTry = new Set(kafka.written.map((w) => w.partition))
  t.equal(firstTry.size, PARTITIONS - 1, 'the lossy send wrote all partitions but one')

  await publisher.publish('incoming', records) // the caller's retry
  t.equal(kafka.producers, 2, 'the producer of the lossy send was retired')
  const keys = new Set(kafka.written.map((w) => w.key))
  t.same(
    records.filter((r) => !keys.has(r.key)),
    [],
    'every record is written once a publish resolves',
  )
})

t.test('a send whose every partition answered resolves', async (t) => {
  const kafka = new FakeKafka(0)
  const publisher = createKafkaPublisher(() => createKafkajsProducer(kafka, { compression: 'none' }), log)
  t.teardown(() => publisher.close())
  await publisher.publish('incoming', records)
  await publisher.publish('changelog', [{ key: 'k', value: 'v', partition: 2 }])
  t.equal(kafka.written.length, records.length + 1)
  t.equal(kafka.producers, 1, 'one producer for both')
})
