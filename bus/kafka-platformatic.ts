// The @platformatic/kafka adapter of the Kafka client port (kafka-port.ts), the default client.
// Only bus/kafka-platformatic* import @platformatic/kafka. Partitioning is the Java client's murmur2
// (compatibilityPartitioner), as on kafkajs. Group member and its fetch loop:
// kafka-platformatic-group.ts; fetching and the reader: kafka-platformatic-fetch.ts.
import {
  Admin,
  Consumer,
  ListOffsetTimestamps,
  ProduceAcks,
  Producer,
  compatibilityPartitioner,
  type MessageToProduce,
  type SASLMechanismValue,
} from '@platformatic/kafka'
import type { BusRecord } from './types.ts'
import type { KafkaBusConfig } from './kafka-config.ts'
import { tpKey, type KafkaClient, type KafkaClientFactory, type KafkaProducer } from './kafka-port.ts'
import { errorChain } from './kafka-errors.ts'
import { platformaticReader, type ClientOptions } from './kafka-platformatic-fetch.ts'
import { joinPlatformaticGroup } from './kafka-platformatic-group.ts'

export const platformaticClient: KafkaClientFactory = (config, log) => {
  const options = clientOptions(config)
  const admin = new Admin(options)
  // Offsets outside any group (readPartition, lag): the group id is never joined.
  const offsets = new Consumer({ ...options, groupId: `${config.clientId}.reader` })

  const client: KafkaClient = {
    async connect() {
      const first = new Admin({ ...options, retries: 1, retryDelay: 200 })
      try {
        await first.metadata({ topics: [] })
      } finally {
        await first.close().catch(() => {})
      }
    },
    async ping() {
      // Metadata from any broker: what every publish and fetch needs first.
      await admin.metadata({ topics: [], forceUpdate: true })
    },
    listTopics: () => admin.listTopics(),
    async createTopics(topics) {
      for (const { topic, partitions, configs } of topics)
        await admin.createTopics({ topics: [topic], partitions, configs }).catch((err) => {
          // Another node created it at the same time (every role does this at start): done.
          const refusals = errorChain(err).filter((e) => e.apiId !== undefined)
          if (refusals.length === 0 || refusals.some((e) => e.apiId !== 'TOPIC_ALREADY_EXISTS')) throw err
        })
    },
    async describeTopics(topics) {
      const metadata = await admin.metadata({ topics, forceUpdate: true })
      return new Map(
        [...metadata.topics].map(([name, t]) => [
          name,
          { partitions: t.partitionsCount, led: t.partitions.every((p) => p.leader >= 0) },
        ]),
      )
    },
    async partitionRanges(topic) {
      const at = (timestamp: bigint) => offsets.listOffsets({ topics: [topic], timestamp })
      const [low, high] = await Promise.all([at(ListOffsetTimestamps.EARLIEST), at(ListOffsetTimestamps.LATEST)])
      return (high.get(topic) ?? []).map((end, partition) => ({
        partition,
        low: low.get(topic)?.at(partition) ?? 0n,
        high: end,
      }))
    },
    async committedOffsets(groupId, partitions) {
      const topics = partitions.map(({ topic, partitions }) => ({ name: topic, partitionIndexes: partitions }))
      const [listed] = await admin.listConsumerGroupOffsets({ groups: [{ groupId, topics }] })
      const committed = new Map<string, bigint>()
      for (const topic of listed?.topics ?? [])
        for (const p of topic.partitions) committed.set(tpKey(topic.name, p.partitionIndex), p.committedOffset)
      return committed
    },
    producer: () => platformaticProducer(options, config),
    join: (group, owner) => joinPlatformaticGroup(options, group, owner, config, log),
    reader: (topic, partition, from) => platformaticReader(options, topic, partition, from),
    saslRefused: (link) =>
      link.apiId === 'SASL_AUTHENTICATION_FAILED' || /SASL|authentication/i.test(link.message ?? ''),
    async close() {
      await Promise.all([admin.close(), offsets.close()])
    },
  }
  return client
}

function clientOptions(config: KafkaBusConfig): ClientOptions {
  return {
    clientId: config.clientId,
    bootstrapBrokers: config.brokers,
    tls: config.tls && { ca: config.tls.ca, cert: config.tls.cert, key: config.tls.key, rejectUnauthorized: true },
    sasl: config.sasl && {
      mechanism: config.sasl.mechanism.toUpperCase() as SASLMechanismValue,
      username: config.sasl.username,
      password: config.sasl.password,
    },
    connectTimeout: 1000,
    requestTimeout: 10_000,
  }
}

/** The client sends a batch's records to each partition leader and resolves only when every one of them answered. */
function platformaticProducer(options: ClientOptions, config: Pick<KafkaBusConfig, 'compression'>): KafkaProducer {
  const producer = new Producer({
    ...options,
    idempotent: true,
    acks: ProduceAcks.ALL,
    partitioner: compatibilityPartitioner,
    autocreateTopics: false,
    compression: config.compression,
    // The client waits 1 s between retries by default: a first send to a topic just created (its
    // leader not yet known to every broker) then missed the publish deadline. Short retries fit in it.
    retries: 20,
    retryDelay: 100,
  })
  return {
    connect: async () => void (await producer.initIdempotentProducer({})),
    async send(records) {
      const messages: MessageToProduce[] = []
      for (const [topic, batch] of records) for (const record of batch) messages.push(toMessage(topic, record))
      await producer.send({ messages })
    },
    close: () => producer.close(true),
  }
}

function toMessage(topic: string, record: BusRecord): MessageToProduce {
  const value = typeof record.value === 'string' ? Buffer.from(record.value) : record.value
  return {
    topic,
    key: Buffer.from(record.key),
    // An empty value is the Bus's tombstone; Kafka's compaction needs a null one.
    value: value.length === 0 ? undefined : value,
    partition: record.partition,
    timestamp: record.timestampMs === undefined ? undefined : BigInt(record.timestampMs),
  }
}
