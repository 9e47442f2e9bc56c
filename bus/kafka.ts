// The Bus on Apache Kafka (kafkajs). Only bus/kafka* import kafkajs. Partitioning is kafkajs'
// Java-compatible murmur2 (DefaultPartitioner), so other Kafka clients place keys the same way,
// and two topics with the same partition count put a key on the same partition number (the
// dedup changelog relies on it). Publishing: kafka-publisher.ts; consumer groups:
// kafka-subscriber.ts; readPartition: kafka-reader.ts.
import type { Logger } from 'pino'
import {
  Kafka,
  logLevel,
  type Admin,
  type KafkaConfig,
  type SASLOptions,
  type ITopicConfig,
  type logCreator,
} from 'kafkajs'
import { SluiceError } from '../core/errors.ts'
import { retryPolicies, withRetry } from '../core/retry.ts'
import type { Bus, ConsumerLag, Subscription, TopicSpec } from './types.ts'
import { createKafkaPublisher } from './kafka-publisher.ts'
import { subscribeKafka, type KafkaSubscription } from './kafka-subscriber.ts'
import { readKafkaPartition } from './kafka-reader.ts'
import { UNTRUSTED_CERTIFICATE_CODES } from './tls-errors.ts'

export interface KafkaBusConfig {
  brokers: string[]
  clientId: string
  /** How long a publish may wait for acks=all before it rejects with LOG_UNAVAILABLE (ingest answers 503). */
  publishTimeoutMs?: number
  /** A consumer that stops heartbeating for this long loses its partitions to the rest of its group. */
  sessionTimeoutMs?: number
  heartbeatIntervalMs?: number
  /** TLS to the brokers; PEM text. Without `ca`, Node's trusted roots (a managed Kafka's public CA). */
  tls?: { ca?: string; cert?: string; key?: string }
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
  partitionsConsumedConcurrently?: number
  maxBatchRecords?: number
  /** How the producer compresses record batches (kafkajs: none or gzip). Consumers decompress whatever they get. */
  compression?: 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd'
  /**
   * Put before every consumer group id, so deployments sharing a Kafka (each with its topic prefix)
   * do not share groups: members of one group rebalance together, and a crashed member of one
   * deployment would stall the other's rebalances for a session timeout.
   */
  groupPrefix?: string
}

// Tombstones on compacted topics are kept (Kafka's default drops them a day after cleaning), so the
// last record of a partition always exists and readPartition knows where the end is. A deleted key
// costs one empty record; the control plane and the dedup changelog (no deletes) stay small.
const KEEP_TOMBSTONES_MS = String(100 * 365 * 24 * 3600 * 1000)

/** The Kafka Bus, and whether a broker answers now (readiness). */
export interface KafkaBus extends Bus {
  reachable(): Promise<boolean>
}

export async function createKafkaBus(config: KafkaBusConfig, log: Logger): Promise<KafkaBus> {
  const options: KafkaConfig = {
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
  const kafka = new Kafka(options)
  const admin = kafka.admin()
  try {
    // A refused login or an untrusted certificate fails the same way every time: one short try
    // first, instead of the admin's ~10 s of retries, so a wrong setting stops startup at once.
    // (Connection retries are the client's, not the admin's: a client of its own.)
    const first = new Kafka({ ...options, retry: { retries: 1, initialRetryTime: 200 } }).admin()
    await first.connect()
    await first.disconnect()
    await admin.connect()
  } catch (err) {
    throw connectError(err, config)
  }
  const publisher = createKafkaPublisher(
    kafka,
    { timeoutMs: config.publishTimeoutMs ?? 1000, gzip: config.compression === 'gzip' },
    log,
  )
  await publisher.connect().catch(async (err) => {
    await admin.disconnect().catch(() => {})
    throw err
  })
  const subscriberConfig = {
    sessionTimeoutMs: config.sessionTimeoutMs ?? 30_000,
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    partitionsConsumedConcurrently: config.partitionsConsumedConcurrently ?? 8,
    maxBatchRecords: config.maxBatchRecords ?? 500,
  }
  const ensured = new Set<string>()
  /** Live subscriptions, by their group as metrics name it and as Kafka knows it (prefixed). */
  const subscriptions = new Map<Subscription, { group: string; groupId: string; subscription: KafkaSubscription }>()

  async function ensureTopics(specs: Record<string, TopicSpec>): Promise<void> {
    const wanted = Object.entries(specs).filter(([topic]) => !ensured.has(topic))
    if (wanted.length === 0) return
    try {
      const existing = new Set(await admin.listTopics())
      const missing = wanted.filter(([topic]) => !existing.has(topic))
      // waitForLeaders: false — on a multi-broker cluster, kafkajs asks brokers that have not heard of
      // the topic yet and fails; leaders are awaited below instead. Another node creating the same
      // topic at once is fine: kafkajs treats "already exists" as done.
      if (missing.length > 0)
        await admin.createTopics({
          waitForLeaders: false,
          topics: missing.map(([topic, spec]) => topicConfig(topic, spec)),
        })
      await withRetry(() => checkLeaders(admin, wanted, log), { policy: retryPolicies.kafkaLeaders })
    } catch (err) {
      throw new SluiceError('LOG_UNAVAILABLE', `could not create Kafka topics ${wanted.map(([t]) => t).join(', ')}`, {
        cause: err,
      })
    }
    for (const [topic] of wanted) ensured.add(topic)
  }

  return {
    ensureTopics,
    publish: (topic, records) => publisher.publish(topic, records),
    async subscribe(options) {
      const groupId = (config.groupPrefix ?? '') + options.group
      const subscription = await subscribeKafka(kafka, { ...options, group: groupId }, subscriberConfig, log)
      const tracked: Subscription = {
        async stop() {
          await subscription.stop()
          subscriptions.delete(tracked)
        },
      }
      subscriptions.set(tracked, { group: options.metricsGroup ?? options.group, groupId, subscription })
      return tracked
    },
    async reachable() {
      // Metadata from any broker: what every publish and fetch needs first.
      await admin.describeCluster()
      return true
    },
    readPartition: (topic, partition, onRecords) =>
      readKafkaPartition(kafka, admin, config.clientId, topic, partition, onRecords),
    consumerLag: () => consumerLag(admin, [...subscriptions.values()]),
    async close() {
      await Promise.all([...subscriptions.keys()].map((s) => s.stop()))
      await publisher.close()
      await admin.disconnect().catch(() => {})
    },
  }
}

/**
 * The end offset (high watermark) of each partition the subscriptions hold, minus their group's
 * committed offset (the partition's first retained offset when the group committed none yet).
 */
async function consumerLag(
  admin: Admin,
  held: Array<{ group: string; groupId: string; subscription: KafkaSubscription }>,
): Promise<ConsumerLag[]> {
  const ends = new Map<string, Promise<Map<number, { low: string; high: string }>>>()
  const endsOf = (topic: string) => {
    let found = ends.get(topic)
    if (!found) {
      found = admin.fetchTopicOffsets(topic).then((offsets) => new Map(offsets.map((o) => [o.partition, o])))
      ends.set(topic, found)
    }
    return found
  }
  const perGroup = await Promise.all(
    held.map(async ({ group, groupId, subscription }) => {
      const owned = subscription.owned()
      if (owned.length === 0) return []
      const topics = [...new Set(owned.map((o) => o.topic))]
      const committed = new Map<string, string>()
      for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics }))
        for (const { partition, offset } of partitions) committed.set(`${topic}\0${partition}`, offset)
      return Promise.all(
        owned.map(async ({ topic, partition }) => {
          const end = (await endsOf(topic)).get(partition)
          if (!end) return []
          const offset = committed.get(`${topic}\0${partition}`) ?? '-1'
          const from = Number(offset) < 0 ? Number(end.low) : Number(offset)
          return [{ group, topic, partition, records: Math.max(0, Number(end.high) - from) }]
        }),
      ).then((lags) => lags.flat())
    }),
  )
  return perGroup.flat()
}

/** A refused login or certificate is a setting to fix, said once; not an outage to retry. */
function connectError(err: unknown, config: KafkaBusConfig): SluiceError {
  const chain: Array<{ name?: string; code?: string; message?: string }> = []
  // kafkajs wraps: KafkaJSNumberOfRetriesExceeded → originalError → …
  let e = err as Record<string, unknown> | undefined
  for (; e && chain.length < 5; e = (e.originalError ?? e.cause) as typeof e) chain.push(e as (typeof chain)[number])
  const where = config.brokers.join(',')
  if (chain.some((e) => e.name === 'KafkaJSSASLAuthenticationError')) {
    const how = `SASL ${config.sasl?.mechanism ?? ''} as ${config.sasl?.username ?? '?'}`
    const setting = 'kafkaUsername / kafkaPassword (SLUICE_KAFKA_USERNAME / SLUICE_KAFKA_PASSWORD)'
    return new SluiceError('CREDENTIALS_REJECTED', `${setting}: Kafka at ${where} refused ${how}`, { cause: err })
  }
  const tls = chain.find((e) => e.code !== undefined && UNTRUSTED_CERTIFICATE_CODES.has(e.code))
  if (tls) {
    const setting = 'kafkaCaFile (--kafka-ca-file / SLUICE_KAFKA_CA_FILE)'
    const message = `${setting}: the certificate of Kafka at ${where} is not trusted (${tls.code})`
    return new SluiceError('CERTIFICATE_UNTRUSTED', message, { cause: err })
  }
  return new SluiceError('LOG_UNAVAILABLE', `cannot reach Kafka at ${where}`, { cause: err })
}

function topicConfig(topic: string, spec: TopicSpec): ITopicConfig {
  const entries: Array<{ name: string; value: string }> = []
  if (spec.compacted) {
    entries.push({ name: 'cleanup.policy', value: spec.retentionMs === undefined ? 'compact' : 'compact,delete' })
    entries.push({ name: 'delete.retention.ms', value: KEEP_TOMBSTONES_MS })
  }
  if (spec.retentionMs !== undefined) entries.push({ name: 'retention.ms', value: String(spec.retentionMs) })
  return { topic, numPartitions: spec.partitions, configEntries: entries }
}

/** Resolves once every wanted topic has a leader for each partition; throws (to be retried) until then. */
async function checkLeaders(admin: Admin, wanted: Array<[string, TopicSpec]>, log: Logger): Promise<void> {
  const { topics } = await admin.fetchTopicMetadata({ topics: wanted.map(([topic]) => topic) })
  for (const [topic, spec] of wanted) {
    const metadata = topics.find((t) => t.name === topic)
    if (!metadata || metadata.partitions.some((p) => p.leader < 0)) throw new Error(`topic ${topic} has no leader yet`)
    // An existing topic keeps its partition count: changing it would move keys between partitions.
    if (metadata.partitions.length !== spec.partitions)
      log.warn(
        { topic, partitions: metadata.partitions.length, configured: spec.partitions },
        'Kafka topic exists with another partition count; keeping it',
      )
  }
}

/** kafkajs logs through pino. Its INFO is per-join chatter (debug here); its errors are mostly retried or surfaced by the Bus. */
function pinoLogCreator(log: Logger): logCreator {
  return () =>
    ({ namespace, level, log: entry }) => {
      const { message, timestamp: _, ...fields } = entry
      // Expected: the publisher bounds producer retries on purpose (see kafka-publisher.ts).
      if (message.startsWith('Limiting retries for the idempotent producer')) return
      const method = level <= logLevel.WARN ? 'warn' : 'debug'
      log[method]({ kafkajs: namespace, ...fields }, message)
    }
}
