// Bus.readPartition on Kafka: one partition from its first retained record up to its high
// watermark as of the call. kafkajs has no manual partition assignment, so the reader is a
// consumer alone in a throwaway group whose assigner hands it exactly that partition; it commits
// nothing, so the group leaves no offsets behind. Joining a new group costs the broker's
// `group.initial.rebalance.delay.ms` (3 s by default; the test brokers set 0): callers restoring
// several partitions should read them in parallel.
//
// The end is known exactly because the last record of a partition always exists: compaction only
// drops a record that a later one supersedes, and the adapter keeps tombstones on compacted topics
// (see kafka.ts). An empty range (low = high, e.g. all expired) resolves at once.
import { randomUUID } from 'node:crypto'
import { AssignerProtocol, type Admin, type Kafka, type PartitionAssigner } from 'kafkajs'
import { SluiceError } from '../core/errors.ts'
import { retryPolicies, withRetry } from '../core/retry.ts'
import type { ConsumedRecord } from './types.ts'
import { toConsumedRecord } from './kafka-subscriber.ts'

const OFFSETS_RETRY = retryPolicies.kafkaOffsets

export async function readKafkaPartition(
  kafka: Kafka,
  admin: Admin,
  clientId: string,
  topic: string,
  partition: number,
  onRecords: (records: ConsumedRecord[]) => Promise<void>,
): Promise<void> {
  let offsets: Awaited<ReturnType<Admin['fetchTopicOffsets']>>[number] | undefined
  try {
    // A partition just created may not be led by its broker yet (NOT_LEADER_FOR_PARTITION): retried.
    const all = await withRetry(() => admin.fetchTopicOffsets(topic), {
      policy: OFFSETS_RETRY,
      shouldRetry: (err) => (err as { retriable?: boolean }).retriable === true,
    })
    offsets = all.find((o) => o.partition === partition)
  } catch (err) {
    throw new SluiceError('LOG_UNAVAILABLE', `could not read the offsets of ${topic}`, { cause: err })
  }
  if (!offsets) throw new Error(`topic ${topic} has no partition ${partition}`)
  const end = BigInt(offsets.high)
  if (end <= BigInt(offsets.low)) return

  const consumer = kafka.consumer({
    groupId: `${clientId}.read.${randomUUID()}`,
    partitionAssigners: [onlyPartition(topic, partition)],
    maxWaitTimeInMs: 200,
    allowAutoTopicCreation: false,
    retry: { restartOnFailure: async () => false },
  })
  let settled = false
  let finish!: () => void, fail!: (err: unknown) => void
  const done = new Promise<void>((resolve, reject) => {
    finish = () => {
      settled = true
      resolve()
    }
    fail = (err) => {
      settled = true
      reject(err)
    }
  })
  consumer.on(consumer.events.CRASH, ({ payload }) =>
    fail(new SluiceError('LOG_UNAVAILABLE', `reading ${topic}/${partition} failed`, { cause: payload.error })),
  )
  try {
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        if (settled) return
        const records = batch.messages.filter((m) => BigInt(m.offset) < end).map(toConsumedRecord)
        try {
          if (records.length > 0) await onRecords(records)
        } catch (err) {
          return fail(err)
        }
        if (BigInt(batch.lastOffset()) + 1n >= end) finish()
      },
    })
    await done
  } catch (err) {
    if (err instanceof SluiceError || settled) throw err
    throw new SluiceError('LOG_UNAVAILABLE', `could not read ${topic}/${partition}`, { cause: err })
  } finally {
    await consumer.disconnect().catch(() => {})
  }
}

/** An assigner giving the group's (only) member the one partition to read. */
function onlyPartition(topic: string, partition: number): PartitionAssigner {
  const name = 'SluiceOnePartition'
  return () => ({
    name,
    version: 0,
    protocol: ({ topics }) => ({
      name,
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }),
    }),
    assign: async ({ members }) =>
      members.map((member, i) => ({
        memberId: member.memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 0,
          assignment: i === 0 ? { [topic]: [partition] } : {},
          userData: Buffer.alloc(0),
        }),
      })),
  })
}
