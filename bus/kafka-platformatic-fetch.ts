// One Fetch of one partition from its leader with @platformatic/kafka, outside any consumer
// group (manual assignment): what Bus.readPartition and the subscriber's per-partition loops use.
import { Consumer, IS_CONTROL, type BaseOptions } from '@platformatic/kafka'
import type { ConsumedRecord } from './types.ts'

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

export async function fetchPartition(
  consumer: Consumer,
  topic: string,
  partition: number,
  offset: bigint,
  maxWaitMs: number,
): Promise<Fetched> {
  const metadata = await consumer.metadata({ topics: [topic] })
  const t = metadata.topics.get(topic)
  const leader = t?.partitions[partition]?.leader
  if (!t || leader === undefined || leader < 0) throw new Error(`${topic}/${partition} has no leader`)
  const response = await consumer.fetch({
    node: leader,
    maxWaitTime: maxWaitMs,
    topics: [
      {
        topicId: t.id,
        partitions: [
          {
            partition,
            fetchOffset: offset,
            currentLeaderEpoch: -1,
            lastFetchedEpoch: -1,
            partitionMaxBytes: PARTITION_MAX_BYTES,
          },
        ],
      },
    ],
  })
  const answer = response.responses[0]?.partitions.find((p) => p.partitionIndex === partition)
  if (!answer) throw new Error(`no fetch answer for ${topic}/${partition}`)
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
