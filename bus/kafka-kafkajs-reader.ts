// Reading one partition outside any group on kafkajs (the core's readPartition). kafkajs has no
// manual partition assignment, so the reader is a consumer alone in a throwaway group whose
// assigner hands it exactly that partition, from the first retained record; it commits nothing,
// so the group leaves no offsets behind. Joining a new group costs the broker's
// `group.initial.rebalance.delay.ms` (3 s by default; the test brokers set 0): callers restoring
// several partitions should read them in parallel. kafkajs pushes batches (eachBatch); each waits
// here until the core takes it, so at most one batch is read ahead.
import { randomUUID } from 'node:crypto'
import { AssignerProtocol, type Kafka, type PartitionAssigner } from 'kafkajs'
import type { ConsumedRecord } from './types.ts'
import type { PartitionReader } from './kafka-port.ts'
import { toConsumedRecord } from './kafka-kafkajs-group.ts'

interface Page {
  records: ConsumedRecord[]
  next: bigint
}

export function kafkajsReader(kafka: Kafka, clientId: string, topic: string, partition: number): PartitionReader {
  const consumer = kafka.consumer({
    groupId: `${clientId}.read.${randomUUID()}`,
    partitionAssigners: [onlyPartition(topic, partition)],
    maxWaitTimeInMs: 200,
    allowAutoTopicCreation: false,
    retry: { restartOnFailure: async () => false },
  })
  const pages: Page[] = []
  let failure: { error: unknown } | undefined
  let closed = false
  let wakeReader: (() => void) | undefined
  let pageTaken: (() => void) | undefined
  const wake = () => {
    wakeReader?.()
    wakeReader = undefined
  }
  const release = () => {
    pageTaken?.()
    pageTaken = undefined
  }
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    failure = { error: payload.error }
    wake()
  })
  const started = (async () => {
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        if (closed) return
        pages.push({ records: batch.messages.map(toConsumedRecord), next: BigInt(batch.lastOffset()) + 1n })
        wake()
        await new Promise<void>((resolve) => {
          pageTaken = resolve
        })
      },
    })
  })()
  started.catch(() => {}) // next() reports it
  return {
    async next() {
      await started
      while (pages.length === 0) {
        if (failure) throw failure.error
        await new Promise<void>((resolve) => {
          wakeReader = resolve
        })
      }
      release()
      return pages.shift()!
    },
    async close() {
      closed = true
      release()
      await started.catch(() => {})
      await consumer.disconnect()
    },
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
