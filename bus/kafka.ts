// The Bus on Apache Kafka, written once over a client port (kafka-port.ts): topics, group-commit
// publishing (kafka-publisher.ts), partition ownership (kafka-subscriber.ts), consumer lag and
// readPartition. The client is an adapter: kafkaClients in kafka-clients.ts. Partitioning is the
// Java client's murmur2 on both, so other Kafka clients place keys the same way, and two topics with
// the same partition count put a key on the same partition number (the dedup changelog relies on it).
import type { Logger } from 'pino'
import { SluiceError } from '../core/errors.ts'
import { retryPolicies, withRetry } from '../core/retry.ts'
import type { Bus, ConsumedRecord, ConsumerLag, Subscription, TopicSpec } from './types.ts'
import type { KafkaBusConfig } from './kafka-config.ts'
import {
  tpKey,
  type GroupMember,
  type KafkaClient,
  type KafkaClientFactory,
  type PartitionRange,
} from './kafka-port.ts'
import { connectError } from './kafka-errors.ts'
import { createKafkaPublisher } from './kafka-publisher.ts'
import { createPartitionOwner, grouped, type OwnedPartitions } from './kafka-subscriber.ts'

// Tombstones on compacted topics are kept (Kafka's default drops them a day after cleaning), so the
// last record of a partition always exists and readPartition knows where the end is. A deleted key
// costs one empty record; the control plane and the dedup changelog (no deletes) stay small.
const KEEP_TOMBSTONES_MS = String(100 * 365 * 24 * 3600 * 1000)

/** The Kafka Bus, and whether a broker answers now (readiness). */
export interface KafkaBus extends Bus {
  reachable(): Promise<boolean>
  /** The groups (as metrics name them) whose member is out of the group now (kafka-port.ts GroupMember.inGroup). */
  outOfGroup(): string[]
}

interface Held {
  /** The group as metrics name it: its metricsGroup, else the group without the prefix. */
  label: string
  groupId: string
  owner: OwnedPartitions
  member: GroupMember
}

export async function createKafkaBus(
  createClient: KafkaClientFactory,
  config: KafkaBusConfig,
  log: Logger,
): Promise<KafkaBus> {
  const client = createClient(config, log)
  try {
    await client.connect()
  } catch (err) {
    await client.close().catch(() => {})
    throw connectError(err, config, client.saslRefused)
  }
  const publisher = createKafkaPublisher(() => client.producer(), log)
  await publisher.connect().catch(async (err) => {
    await client.close().catch(() => {})
    throw err
  })
  const ensured = new Set<string>()
  const subscriptions = new Map<Subscription, Held>()

  async function ensureTopics(specs: Record<string, TopicSpec>): Promise<void> {
    const wanted = Object.entries(specs).filter(([topic]) => !ensured.has(topic))
    if (wanted.length === 0) return
    try {
      const existing = new Set(await client.listTopics())
      const missing = wanted.filter(([topic]) => !existing.has(topic))
      if (missing.length > 0)
        await client.createTopics(
          missing.map(([topic, spec]) => ({ topic, partitions: spec.partitions, configs: topicConfigs(spec) })),
        )
      await withRetry(() => checkLeaders(client, wanted, log), { policy: retryPolicies.kafkaLeaders })
    } catch (err) {
      const names = wanted.map(([t]) => t).join(', ')
      throw new SluiceError('LOG_UNAVAILABLE', `could not create Kafka topics ${names}`, { cause: err })
    }
    for (const [topic] of wanted) ensured.add(topic)
  }

  async function readPartition(
    topic: string,
    partition: number,
    onRecords: (records: ConsumedRecord[]) => Promise<void>,
    from = '0',
  ): Promise<void> {
    let range: PartitionRange | undefined
    try {
      // A partition just created may not be led by its broker yet: retried.
      const ranges = await withRetry(() => client.partitionRanges(topic), { policy: retryPolicies.kafkaOffsets })
      range = ranges.find((r) => r.partition === partition)
    } catch (err) {
      throw new SluiceError('LOG_UNAVAILABLE', `could not read the offsets of ${topic}`, { cause: err })
    }
    if (!range) throw new Error(`topic ${topic} has no partition ${partition}`)
    // The end is known exactly because the last record of a partition always exists: compaction only
    // drops a record a later one supersedes, and tombstones are kept. An empty range resolves at once.
    const end = range.high
    const start = BigInt(from) > range.low ? BigInt(from) : range.low
    if (end <= start) return
    const reader = client.reader(topic, partition, start)
    try {
      for (let at = start; at < end; ) {
        let page: Awaited<ReturnType<typeof reader.next>>
        try {
          page = await reader.next()
        } catch (err) {
          throw new SluiceError('LOG_UNAVAILABLE', `could not read ${topic}/${partition}`, { cause: err })
        }
        // A fetch answers with whole record batches: the first may start before `start`.
        const records = page.records.filter((r) => BigInt(r.offset) >= start && BigInt(r.offset) < end)
        if (records.length > 0) await onRecords(records)
        at = page.next
      }
    } finally {
      await reader.close().catch(() => {})
    }
  }

  /**
   * For each partition a subscription of this process owns: the end offset minus its group's
   * committed offset, or minus the first retained offset while the group committed nothing there.
   */
  async function consumerLag(): Promise<ConsumerLag[]> {
    const ranges = new Map<string, Promise<Map<number, PartitionRange>>>()
    const rangesOf = (topic: string) => {
      let found = ranges.get(topic)
      if (!found) {
        found = client.partitionRanges(topic).then((all) => new Map(all.map((r) => [r.partition, r])))
        ranges.set(topic, found)
      }
      return found
    }
    const perGroup = await Promise.all(
      [...subscriptions.values()].map(async ({ label, groupId, owner }) => {
        const owned = owner.owned()
        if (owned.length === 0) return []
        const committed = await client.committedOffsets(groupId, grouped(owned))
        const lags = await Promise.all(
          owned.map(async ({ topic, partition }) => {
            const range = (await rangesOf(topic)).get(partition)
            if (!range) return []
            const offset = committed.get(tpKey(topic, partition)) ?? -1n
            const from = offset < 0n ? range.low : offset
            return [{ group: label, topic, partition, records: Math.max(0, Number(range.high - from)) }]
          }),
        )
        return lags.flat()
      }),
    )
    return perGroup.flat()
  }

  return {
    ensureTopics,
    publish: (topic, records) => publisher.publish(topic, records),
    async subscribe(options) {
      const groupId = config.groupPrefix + options.group
      const owner = createPartitionOwner({ ...options, group: groupId }, log)
      let member: GroupMember
      try {
        member = await client.join(
          {
            groupId,
            topics: options.topics,
            fromBeginning: options.fromBeginning ?? true,
            coPartitioned: options.coPartitioned ?? false,
          },
          owner,
        )
      } catch (err) {
        throw new SluiceError('LOG_UNAVAILABLE', `could not join consumer group ${groupId}`, { cause: err })
      }
      await owner.settled() // the first assignment is in place when subscribe resolves, as with the local bus
      const tracked: Subscription = {
        async stop() {
          await owner.stop(member)
          subscriptions.delete(tracked)
        },
      }
      subscriptions.set(tracked, { label: options.metricsGroup ?? options.group, groupId, owner, member })
      return tracked
    },
    async reachable() {
      await client.ping()
      return true
    },
    outOfGroup: () => [...subscriptions.values()].filter((held) => !held.member.inGroup()).map((held) => held.label),
    readPartition,
    consumerLag,
    async close() {
      await Promise.all([...subscriptions.keys()].map((s) => s.stop()))
      await publisher.close()
      await client.close().catch(() => {})
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

/** Resolves once every wanted topic has a leader for each partition; throws (to be retried) until then. */
async function checkLeaders(client: KafkaClient, wanted: Array<[string, TopicSpec]>, log: Logger): Promise<void> {
  const layouts = await client.describeTopics(wanted.map(([topic]) => topic))
  for (const [topic, spec] of wanted) {
    const layout = layouts.get(topic)
    if (!layout?.led) throw new Error(`topic ${topic} has no leader yet`)
    // An existing topic keeps its partition count: changing it would move keys between partitions.
    if (layout.partitions !== spec.partitions)
      log.warn(
        { topic, partitions: layout.partitions, configured: spec.partitions },
        'Kafka topic exists with another partition count; keeping it',
      )
  }
}
