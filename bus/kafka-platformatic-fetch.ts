// Fetching given partitions from their leaders with @platformatic/kafka, outside any consumer
// group (manual assignment): what the reader below (Bus.readPartition) and the group member's fetch
// loop (kafka-platformatic-group.ts) use.
import { Consumer, IS_CONTROL, type BaseOptions, type fetchV17 } from '@platformatic/kafka'
import { retryPolicies, withRetry } from '../core/retry.ts'
import type { ConsumedRecord } from './types.ts'
import { tpKey, type PartitionReader } from './kafka-port.ts'

/** The connection settings every client of the adapter shares (brokers, TLS, SASL, timeouts). */
export type ClientOptions = Omit<BaseOptions, 'clientId'> & { clientId: string }

export interface Fetched {
  records: ConsumedRecord[]
  /** The offset to fetch next: past the last record, compacted gap or control record returned. */
  next: bigint
  /** The fetch offset is outside the partition's retained range (expired): start again from the beginning. */
  outOfRange: boolean
}

const OFFSET_OUT_OF_RANGE = 1
const PARTITION_MAX_BYTES = 1 << 20
const READ_WAIT_MS = 200

export interface PartitionAt {
  topic: string
  partition: number
  offset: bigint
}

/**
 * One Fetch per leader of the given partitions (in parallel), each from its offset. The client
 * keeps one incremental fetch session per broker (KIP-227) and a Fetch lists every partition the
 * session should serve, so a consumer must not run two fetches at once: callers fetch everything
 * they read in one call. A partition the answer leaves out has nothing new.
 */
export async function fetchPartitions(
  consumer: Consumer,
  wanted: PartitionAt[],
  maxWaitMs: number,
): Promise<Map<string, Fetched>> {
  const metadata = await consumer.metadata({ topics: [...new Set(wanted.map((w) => w.topic))] })
  const byLeader = new Map<number, PartitionAt[]>()
  for (const w of wanted) {
    const leader = metadata.topics.get(w.topic)?.partitions[w.partition]?.leader
    if (leader === undefined || leader < 0) throw new Error(`${w.topic}/${w.partition} has no leader`)
    byLeader.set(leader, [...(byLeader.get(leader) ?? []), w])
  }
  const out = new Map<string, Fetched>()
  await Promise.all(
    [...byLeader].map(async ([node, partitions]) => {
      const topics = new Map<string, PartitionAt[]>()
      for (const p of partitions) topics.set(p.topic, [...(topics.get(p.topic) ?? []), p])
      const response = await consumer.fetch({
        node,
        maxWaitTime: maxWaitMs,
        topics: [...topics].map(([topic, ps]) => ({
          topicId: metadata.topics.get(topic)!.id,
          partitions: ps.map((p) => ({
            partition: p.partition,
            fetchOffset: p.offset,
            currentLeaderEpoch: -1,
            lastFetchedEpoch: -1,
            partitionMaxBytes: PARTITION_MAX_BYTES,
          })),
        })),
      })
      const byId = new Map([...topics.keys()].map((topic) => [metadata.topics.get(topic)!.id, topic]))
      for (const answer of response.responses) {
        const topic = byId.get(answer.topicId)
        for (const p of answer.partitions) {
          const asked = partitions.find((w) => w.topic === topic && w.partition === p.partitionIndex)
          if (asked) out.set(tpKey(asked.topic, asked.partition), parse(asked, p))
        }
      }
      for (const p of partitions)
        if (!out.has(tpKey(p.topic, p.partition)))
          out.set(tpKey(p.topic, p.partition), { records: [], next: p.offset, outOfRange: false })
    }),
  )
  return out
}

function parse(asked: PartitionAt, answer: fetchV17.FetchResponsePartition): Fetched {
  const { topic, partition, offset } = asked
  if (answer.errorCode === OFFSET_OUT_OF_RANGE) return { records: [], next: offset, outOfRange: true }
  if (answer.errorCode !== 0) throw new Error(`fetch ${topic}/${partition}: Kafka error ${answer.errorCode}`)
  const records: ConsumedRecord[] = []
  let next = offset
  for (const batch of answer.records ?? []) {
    const end = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n
    if ((batch.attributes & IS_CONTROL) === 0)
      for (const record of batch.records) {
        const at = batch.firstOffset + BigInt(record.offsetDelta)
        if (at < offset) continue // a batch is returned whole, from before the fetch offset too
        records.push({
          key: record.key?.toString('utf8') ?? '',
          value: record.value ?? Buffer.alloc(0), // a null value (tombstone) is the Bus's empty value
          timestampMs: Number(batch.firstTimestamp + record.timestampDelta),
          offset: String(at),
        })
      }
    if (end > next) next = end
  }
  return { records, next, outOfRange: false }
}

/** A reader with a consumer of its own: the client's fetch session per broker serves one reader at a time. */
export function platformaticReader(
  client: ClientOptions,
  topic: string,
  partition: number,
  from: bigint,
): PartitionReader {
  const consumer = new Consumer({ ...client, groupId: `${client.clientId}.reader` })
  let offset = from
  return {
    async next() {
      const fetched = await withRetry(
        async () =>
          (await fetchPartitions(consumer, [{ topic, partition, offset }], READ_WAIT_MS)).get(tpKey(topic, partition))!,
        { policy: retryPolicies.kafkaOffsets, onRetry: () => consumer.clearMetadata() },
      )
      if (fetched.outOfRange) throw new Error(`${topic}/${partition} was truncated while read`)
      offset = fetched.next
      return fetched
    },
    close: () => consumer.close(),
  }
}
