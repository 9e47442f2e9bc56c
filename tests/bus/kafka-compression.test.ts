// SLUICE_KAFKA_COMPRESSION on both Kafka clients, against the shared real broker: a batch published
// compressed takes less room in the broker's log than the same batch uncompressed (asked of the
// broker with DescribeLogDirs), reads back unchanged, and gzip batches read across clients. kafkajs
// has no lz4, zstd or snappy: asking for them with it is refused at startup, naming the settings.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { Admin } from '@platformatic/kafka'
import pino from 'pino'
import type { KafkaClientName } from '../../bus/kafka-clients.ts'
import type { KafkaBusConfig } from '../../bus/kafka-config.ts'
import type { Bus, ConsumedRecord } from '../../bus/types.ts'
import { loadConfig } from '../../config/config.ts'
import { testServices } from '../infra/services.ts'
import { createTestKafkaBus } from '../helpers/kafka-bus.ts'

type Compression = KafkaBusConfig['compression']
const log = pino({ level: 'silent' })
const brokers = testServices().kafkaBrokers
const prefix = `compress-${randomUUID().slice(0, 8)}`
const buses: Bus[] = []
t.teardown(() => Promise.all(buses.map((b) => b.close())))

async function open(client: KafkaClientName, compression: Compression): Promise<Bus> {
  const bus = await createTestKafkaBus({ brokers, clientId: `compress-${client}`, compression }, log, client)
  buses.push(bus)
  return bus
}

// Events much like the ones ingest writes: similar JSON, different ids.
const values = Array.from({ length: 500 }, (_, i) =>
  JSON.stringify({
    name: 'app/order.created',
    id: `order-${i}`,
    data: { orderId: `o-${i}`, amount: i, currency: 'EUR' },
  }),
)

async function publishAll(bus: Bus, topic: string): Promise<void> {
  await bus.ensureTopics({ [topic]: { partitions: 1 } })
  await bus.publish(
    topic,
    values.map((v, i) => ({ key: `k${i}`, value: Buffer.from(v), partition: 0 })),
  )
}

async function readAll(bus: Bus, topic: string): Promise<string[]> {
  const got: string[] = []
  await bus.readPartition(topic, 0, async (records: ConsumedRecord[]) => {
    got.push(...records.map((r) => r.value.toString()))
  })
  return got
}

async function logBytes(topic: string): Promise<number> {
  const admin = new Admin({ clientId: 'compress-test', bootstrapBrokers: brokers })
  try {
    const dirs = await admin.describeLogDirs({ topics: [{ name: topic, partitions: [0] }] })
    let bytes = 0
    for (const broker of dirs)
      for (const dir of broker.results)
        for (const tp of dir.topics)
          if (tp.name === topic) for (const p of tp.partitions) bytes += Number(p.partitionSize)
    return bytes
  } finally {
    await admin.close()
  }
}

const cases: Array<[KafkaClientName, Compression]> = [
  ['platformatic', 'lz4'],
  ['platformatic', 'zstd'],
  ['platformatic', 'snappy'],
  ['platformatic', 'gzip'],
  ['kafkajs', 'gzip'],
]
const uncompressed: Record<string, number> = {}

for (const client of ['platformatic', 'kafkajs'] as const)
  t.test(`${client}, none: the baseline size`, async (t) => {
    const topic = `${prefix}.${client}-none`
    const bus = await open(client, 'none')
    await publishAll(bus, topic)
    t.same(await readAll(bus, topic), values)
    uncompressed[client] = await logBytes(topic)
    t.ok(uncompressed[client] > values.join('').length, 'the log holds at least the values')
  })

for (const [client, compression] of cases)
  t.test(`${client}, ${compression}: smaller in the broker's log, read back unchanged`, async (t) => {
    const topic = `${prefix}.${client}-${compression}`
    const bus = await open(client, compression)
    await publishAll(bus, topic)
    t.same(await readAll(bus, topic), values)
    const bytes = await logBytes(topic)
    t.ok(bytes < uncompressed[client] / 2, `${bytes} bytes against ${uncompressed[client]} uncompressed`)
  })

t.test('gzip batches read across clients', async (t) => {
  const fromPlatformatic = `${prefix}.platformatic-gzip`
  const fromKafkajs = `${prefix}.kafkajs-gzip`
  t.same(await readAll(await open('kafkajs', 'none'), fromPlatformatic), values)
  t.same(await readAll(await open('platformatic', 'none'), fromKafkajs), values)
})

t.test('kafkajs with lz4, zstd or snappy is refused at startup, naming the settings', async (t) => {
  for (const compression of ['lz4', 'zstd', 'snappy'])
    t.throws(() => loadConfig('dev', {}, { SLUICE_KAFKA_CLIENT: 'kafkajs', SLUICE_KAFKA_COMPRESSION: compression }), {
      code: 'CONFIG_INVALID',
      message: new RegExp(
        `kafkaCompression \\(--kafka-compression / SLUICE_KAFKA_COMPRESSION\\): ${compression} needs kafkaClient platformatic`,
      ),
    })
  t.match(loadConfig('dev', {}, { SLUICE_KAFKA_CLIENT: 'kafkajs', SLUICE_KAFKA_COMPRESSION: 'GZIP' }), {
    kafkaCompression: 'gzip',
  })
  t.match(loadConfig('dev', {}, {}), { kafkaClient: 'platformatic', kafkaCompression: 'none' })
  t.throws(() => loadConfig('dev', {}, { SLUICE_KAFKA_COMPRESSION: 'brotli' }), {
    code: 'CONFIG_INVALID',
    message: /kafkaCompression/,
  })
})
