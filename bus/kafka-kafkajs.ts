// The kafkajs adapter of the Kafka client port (kafka-port.ts): the design card's client, kept
// supported. Only bus/kafka-kafkajs* import kafkajs. Producer: kafka-kafkajs-producer.ts; group
// member: kafka-kafkajs-group.ts; reader: kafka-kafkajs-reader.ts.
import type { Logger } from 'pino'
import { Kafka, logLevel, type KafkaConfig, type SASLOptions, type logCreator } from 'kafkajs'
import type { KafkaBusConfig } from './kafka-config.ts'
import { tpKey, type KafkaClient, type KafkaClientFactory } from './kafka-port.ts'
import { createKafkajsProducer } from './kafka-kafkajs-producer.ts'
import { joinKafkajsGroup } from './kafka-kafkajs-group.ts'
import { kafkajsReader } from './kafka-kafkajs-reader.ts'

export const kafkajsClient: KafkaClientFactory = (config, log) => {
  const options = kafkaOptions(config, log)
  const kafka = new Kafka(options)
  const admin = kafka.admin()

  const client: KafkaClient = {
    async connect() {
      // Connection retries are the client's, not the admin's: a client of its own for the one short try.
      const first = new Kafka({ ...options, retry: { retries: 1, initialRetryTime: 200 } }).admin()
      await first.connect()
      await first.disconnect()
      await admin.connect()
    },
    async ping() {
      // Metadata from any broker: what every publish and fetch needs first.
      await admin.describeCluster()
    },
    listTopics: () => admin.listTopics(),
    async createTopics(topics) {
      // waitForLeaders: false, since on a multi-broker cluster kafkajs asks brokers that have not heard
      // of the topic yet and fails (the core awaits leaders). kafkajs treats "already exists" as done.
      await admin.createTopics({
        waitForLeaders: false,
        topics: topics.map(({ topic, partitions, configs }) => ({
          topic,
          numPartitions: partitions,
          configEntries: configs,
        })),
      })
    },
    async describeTopics(topics) {
      const metadata = await admin.fetchTopicMetadata({ topics })
      return new Map(
        metadata.topics.map((t) => [
          t.name,
          { partitions: t.partitions.length, led: t.partitions.every((p) => p.leader >= 0) },
        ]),
      )
    },
    async partitionRanges(topic) {
      const offsets = await admin.fetchTopicOffsets(topic)
      return offsets.map((o) => ({ partition: o.partition, low: BigInt(o.low), high: BigInt(o.high) }))
    },
    async committedOffsets(groupId, partitions) {
      const committed = new Map<string, bigint>()
      const topics = partitions.map(({ topic }) => topic)
      for (const { topic, partitions: listed } of await admin.fetchOffsets({ groupId, topics }))
        for (const { partition, offset } of listed) committed.set(tpKey(topic, partition), BigInt(offset))
      return committed
    },
    producer: () => createKafkajsProducer(kafka, config),
    join: (group, owner) => joinKafkajsGroup(kafka, group, owner, config, log),
    reader: (topic, partition) => kafkajsReader(kafka, config.clientId, topic, partition),
    saslRefused: (link) => link.name === 'KafkaJSSASLAuthenticationError',
    close: () => admin.disconnect(),
  }
  return client
}

function kafkaOptions(config: KafkaBusConfig, log: Logger): KafkaConfig {
  return {
    clientId: config.clientId,
    brokers: config.brokers,
    ssl: config.tls && {
      ca: config.tls.ca && [config.tls.ca],
      cert: config.tls.cert,
      key: config.tls.key,
      rejectUnauthorized: true,
    },
    sasl: config.sasl && ({ ...config.sasl } as SASLOptions),
    connectionTimeout: 1000,
    requestTimeout: 10_000,
    logLevel: logLevel.INFO,
    logCreator: pinoLogCreator(log),
  }
}

/** kafkajs logs through pino. Its INFO is per-join chatter (debug here); its errors are mostly retried or surfaced. */
function pinoLogCreator(log: Logger): logCreator {
  return () =>
    ({ namespace, level, log: entry }) => {
      const { message, timestamp: _, ...fields } = entry
      // Expected: the producer bounds its retries on purpose (see kafka-kafkajs-producer.ts).
      if (message.startsWith('Limiting retries for the idempotent producer')) return
      const method = level <= logLevel.WARN ? 'warn' : 'debug'
      log[method]({ kafkajs: namespace, ...fields }, message)
    }
}
