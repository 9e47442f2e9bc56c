// The Bus on Apache Kafka with @platformatic/kafka (SLUICE_KAFKA_CLIENT=platformatic), beside
// bus/kafka.ts on kafkajs; the same contract, the same settings (KafkaBusConfig) and the same
// partitioning: the Java client's murmur2 (compatibilityPartitioner), so both adapters, and other
// Kafka clients, put a key on the same partition. Publishing: kafka-platformatic-publisher.ts;
// consumer groups: kafka-platformatic-subscriber.ts; readPartition: a plain Fetch of the one
// partition (kafka-platformatic-fetch.ts), no consumer group.
import type { Logger } from 'pino'
import { Admin, Consumer, ListOffsetTimestamps, type SASLMechanismValue } from '@platformatic/kafka'
import { SluiceError } from '../core/errors.ts'
import { retryPolicies, withRetry } from '../core/retry.ts'
import type { ConsumedRecord, Subscription, TopicSpec } from './types.ts'
import type { KafkaBus, KafkaBusConfig } from './kafka.ts'
import { fetchPartitions, partitionKey, type ClientOptions, type Fetched } from './kafka-platformatic-fetch.ts'
import { createPlatformaticPublisher } from './kafka-platformatic-publisher.ts'
import {
  subscribePlatformatic,
  type PartitionOffsets,
  type PlatformaticSubscription,
} from './kafka-platformatic-subscriber.ts'
import { UNTRUSTED_CERTIFICATE_CODES } from './tls-errors.ts'

// Kept as on kafkajs (see kafka.ts): readPartition knows a partition's end because its last record exists.
const KEEP_TOMBSTONES_MS = String(100 * 365 * 24 * 3600 * 1000)
const OFFSETS_RETRY = retryPolicies.kafkaOffsets
const READ_WAIT_MS = 200

export interface PlatformaticKafkaBus extends KafkaBus {
  /** Committed vs end offsets of every partition a subscription of `group` (without the prefix) reads. */
  groupOffsets(group: string): Promise<PartitionOffsets[]>
}

export async function createPlatformaticKafkaBus(config: KafkaBusConfig, log: Logger): Promise<PlatformaticKafkaBus> {
  const client: ClientOptions = {
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
  const admin = new Admin(client)
  // Offsets outside any group (readPartition): the group id is never joined.
  const reader = new Consumer({ ...client, groupId: `${config.clientId}.reader` })
  try {
    // A refused login or an untrusted certificate fails the same way every time: one short try.
    const first = new Admin({ ...client, retries: 1, retryDelay: 200 })
    try {
      await first.metadata({ topics: [] })
    } finally {
      await first.close().catch(() => {})
    }
  } catch (err) {
    await Promise.all([admin.close(), reader.close()]).catch(() => {})
    throw connectError(err, config)
  }
  const publisher = createPlatformaticPublisher(client, {
    timeoutMs: config.publishTimeoutMs ?? 1000,
    compression: config.compression ?? 'none',
  })
  await publisher.connect().catch(async (err) => {
    await Promise.all([admin.close(), reader.close()]).catch(() => {})
    throw err
  })
  const subscriberConfig = {
    sessionTimeoutMs: config.sessionTimeoutMs ?? 30_000,
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    maxBatchRecords: config.maxBatchRecords ?? 500,
  }
  const ensured = new Set<string>()
  /** Each subscription's group (without the prefix) and the group its lag is reported as. */
  const subscriptions = new Map<PlatformaticSubscription, { group: string; label: string }>()

  async function ensureTopics(specs: Record<string, TopicSpec>): Promise<void> {
    const wanted = Object.entries(specs).filter(([topic]) => !ensured.has(topic))
    if (wanted.length === 0) return
    try {
      const existing = new Set(await admin.listTopics())
      for (const [topic, spec] of wanted.filter(([topic]) => !existing.has(topic)))
        await admin
          .createTopics({ topics: [topic], partitions: spec.partitions, configs: topicConfigs(spec) })
          .catch((err) => {
            // Another node created it at the same time (every role does this at start): done.
            const refusals = errorChain(err).filter((e) => e.apiId !== undefined)
            if (refusals.length === 0 || refusals.some((e) => e.apiId !== 'TOPIC_ALREADY_EXISTS')) throw err
          })
      await withRetry(() => checkLeaders(wanted), { policy: retryPolicies.kafkaLeaders })
    } catch (err) {
      throw new SluiceError('LOG_UNAVAILABLE', `could not create Kafka topics ${wanted.map(([t]) => t).join(', ')}`, {
        cause: err,
      })
    }
    for (const [topic] of wanted) ensured.add(topic)
  }

  async function checkLeaders(wanted: Array<[string, TopicSpec]>): Promise<void> {
    const metadata = await admin.metadata({ topics: wanted.map(([topic]) => topic), forceUpdate: true })
    for (const [topic, spec] of wanted) {
      const t = metadata.topics.get(topic)
      if (!t || t.partitions.some((p) => p.leader < 0)) throw new Error(`topic ${topic} has no leader yet`)
      if (t.partitionsCount !== spec.partitions)
        log.warn(
          { topic, partitions: t.partitionsCount, configured: spec.partitions },
          'Kafka topic exists with another partition count; keeping it',
        )
    }
  }

  async function readPartition(
    topic: string,
    partition: number,
    onRecords: (records: ConsumedRecord[]) => Promise<void>,
  ): Promise<void> {
    let low: bigint, end: bigint
    try {
      // A partition just created may not be led by its broker yet: retried.
      ;[low, end] = await withRetry(
        async () => {
          const offsets = (timestamp: bigint) =>
            reader.listOffsets({ topics: [topic], partitions: { [topic]: [partition] }, timestamp })
          const [first, last] = await Promise.all([
            offsets(ListOffsetTimestamps.EARLIEST),
            offsets(ListOffsetTimestamps.LATEST),
          ])
          return [first.get(topic)?.at(partition), last.get(topic)?.at(partition)] as const
        },
        { policy: OFFSETS_RETRY },
      ).then(([l, h]) => {
        if (l === undefined || h === undefined) throw new Error(`topic ${topic} has no partition ${partition}`)
        return [l, h]
      })
    } catch (err) {
      throw new SluiceError('LOG_UNAVAILABLE', `could not read the offsets of ${topic}`, { cause: err })
    }
    // A consumer of its own: the client's fetch session per broker serves one reader at a time.
    const consumer = new Consumer({ ...client, groupId: `${client.clientId}.reader` })
    try {
      let offset = low
      while (offset < end) {
        let fetched: Fetched
        try {
          fetched = await withRetry(
            async () =>
              (await fetchPartitions(consumer, [{ topic, partition, offset }], READ_WAIT_MS)).get(
                partitionKey(topic, partition),
              )!,
            { policy: OFFSETS_RETRY, onRetry: () => consumer.clearMetadata() },
          )
        } catch (err) {
          throw new SluiceError('LOG_UNAVAILABLE', `could not read ${topic}/${partition}`, { cause: err })
        }
        if (fetched.outOfRange)
          throw new SluiceError('LOG_UNAVAILABLE', `${topic}/${partition} was truncated while read`)
        const records = fetched.records.filter((r) => BigInt(r.offset) < end)
        if (records.length > 0) await onRecords(records)
        offset = fetched.next
      }
    } finally {
      await consumer.close().catch(() => {})
    }
  }

  return {
    ensureTopics,
    publish: (topic, records) => publisher.publish(topic, records),
    async subscribe(options) {
      const group = (config.groupPrefix ?? '') + options.group
      const subscription = await subscribePlatformatic(client, { ...options, group }, subscriberConfig, log)
      const tracked: PlatformaticSubscription = {
        async stop() {
          await subscription.stop()
          subscriptions.delete(tracked)
        },
        offsets: () => subscription.offsets(),
      }
      subscriptions.set(tracked, { group: options.group, label: options.metricsGroup ?? options.group })
      return tracked as Subscription
    },
    async groupOffsets(group) {
      const all = [...subscriptions].filter(([, held]) => held.group === group).map(([s]) => s.offsets())
      return (await Promise.all(all)).flat()
    },
    // Lag from a group that committed nothing yet counts from offset 0, not the first retained one.
    async consumerLag() {
      const held = [...subscriptions].map(async ([s, { label }]) =>
        (await s.offsets()).map(({ topic, partition, committed, end }) => ({
          group: label,
          topic,
          partition,
          records: Math.max(0, Number(end - (committed < 0n ? 0n : committed))),
        })),
      )
      return (await Promise.all(held)).flat()
    },
    async reachable() {
      // Metadata from any broker: what every publish and fetch needs first.
      await admin.metadata({ topics: [], forceUpdate: true })
      return true
    },
    readPartition,
    async close() {
      await Promise.all([...subscriptions.keys()].map((s) => s.stop()))
      await publisher.close()
      await Promise.all([admin.close(), reader.close()]).catch(() => {})
    },
  }
}

function topicConfigs(spec: TopicSpec): Array<{ name: string; value: string }> {
  const entries: Array<{ name: string; value: string }> = []
  if (spec.compacted) {
    entries.push({ name: 'cleanup.policy', value: spec.retentionMs === undefined ? 'compact' : 'compact,delete' })
    entries.push({ name: 'delete.retention.ms', value: KEEP_TOMBSTONES_MS })
  }
  if (spec.retentionMs !== undefined) entries.push({ name: 'retention.ms', value: String(spec.retentionMs) })
  return entries
}

type ChainLink = { name?: string; code?: string | number; errorCode?: number; message?: string; apiId?: string }

/** An error, its causes and the errors a MultipleErrors groups, flattened. */
function errorChain(err: unknown): ChainLink[] {
  const out: ChainLink[] = []
  const visit = (e: unknown, depth: number) => {
    if (!e || typeof e !== 'object' || depth > 6 || out.length > 50) return
    out.push(e as ChainLink)
    const r = e as { cause?: unknown; errors?: unknown[] }
    if (Array.isArray(r.errors)) for (const inner of r.errors) visit(inner, depth + 1)
    visit(r.cause, depth + 1)
  }
  visit(err, 0)
  return out
}

/** A refused login or certificate is a setting to fix, said once; not an outage to retry (as kafka.ts). */
function connectError(err: unknown, config: KafkaBusConfig): SluiceError {
  const chain = errorChain(err)
  const where = config.brokers.join(',')
  if (chain.some((e) => e.apiId === 'SASL_AUTHENTICATION_FAILED' || /SASL|authentication/i.test(e.message ?? ''))) {
    const how = `SASL ${config.sasl?.mechanism ?? ''} as ${config.sasl?.username ?? '?'}`
    const setting = 'kafkaUsername / kafkaPassword (SLUICE_KAFKA_USERNAME / SLUICE_KAFKA_PASSWORD)'
    return new SluiceError('CREDENTIALS_REJECTED', `${setting}: Kafka at ${where} refused ${how}`, { cause: err })
  }
  const tls = chain.find((e) => typeof e.code === 'string' && UNTRUSTED_CERTIFICATE_CODES.has(e.code))
  if (tls) {
    const setting = 'kafkaCaFile (--kafka-ca-file / SLUICE_KAFKA_CA_FILE)'
    const message = `${setting}: the certificate of Kafka at ${where} is not trusted (${tls.code})`
    return new SluiceError('CERTIFICATE_UNTRUSTED', message, { cause: err })
  }
  return new SluiceError('LOG_UNAVAILABLE', `cannot reach Kafka at ${where}`, { cause: err })
}
