// A consumer group member on kafkajs, driving the core's PartitionOwner (kafka-subscriber.ts) from
// kafkajs' own fetch loop: kafkajs has no public fetch API. Offsets are resolved only for records
// the owner handled (eachBatchAutoResolve: false), and kafkajs commits resolved offsets after each
// batch.
//
// Ordering (bus/ARCHITECTURE.md): kafkajs emits GROUP_JOIN synchronously inside joinAndSync, before
// its fetchers start, so every assignment is queued with the owner before any batch of it can
// arrive; each batch first awaits the owner's queue. kafkajs does not rejoin (so the group cannot
// hand a partition to another member) until its fetchers drained the batches in flight.
import type { Logger } from 'pino'
import { AssignerProtocol, type EachBatchPayload, type Kafka, type KafkaMessage, type PartitionAssigner } from 'kafkajs'
import { retryPolicies, withRetry } from '../core/retry.ts'
import type { ConsumedRecord } from './types.ts'
import type { KafkaBusConfig } from './kafka-config.ts'
import type { GroupMember, GroupOptions, PartitionOwner } from './kafka-port.ts'
import { errorChain } from './kafka-errors.ts'
import { rangeAssignment } from './kafka-range-assignment.ts'

/** kafkajs runs eachBatch for this many partitions at once (the @platformatic/kafka loop: all it fetched). */
const PARTITIONS_CONSUMED_CONCURRENTLY = 8

export function toConsumedRecord(message: KafkaMessage): ConsumedRecord {
  return {
    key: message.key?.toString('utf8') ?? '',
    value: message.value ?? Buffer.alloc(0), // a null value (tombstone) is the Bus's empty value
    timestampMs: Number(message.timestamp),
    offset: message.offset,
  }
}

export async function joinKafkajsGroup(
  kafka: Kafka,
  group: GroupOptions,
  owner: PartitionOwner,
  config: Pick<KafkaBusConfig, 'sessionTimeoutMs' | 'heartbeatIntervalMs'>,
  log: Logger,
): Promise<GroupMember> {
  const consumer = kafka.consumer({
    groupId: group.groupId,
    sessionTimeout: config.sessionTimeoutMs,
    heartbeatInterval: config.heartbeatIntervalMs,
    maxWaitTimeInMs: 500,
    allowAutoTopicCreation: false,
    retry: { restartOnFailure: async () => true },
    ...(group.coPartitioned && { partitionAssigners: [rangeAssigner] }),
  })
  let inGroup = true
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    inGroup = true
    const assignment = Object.entries(payload.memberAssignment).map(([topic, partitions]) => ({ topic, partitions }))
    void owner.assigned(payload.memberId, assignment)
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    // kafkajs has left the group; it rejoins (GROUP_JOIN) when it restarts, possibly as a new member.
    log.warn({ err: payload.error, group: group.groupId, restart: payload.restart }, 'kafka consumer crashed')
    inGroup = false
    if (!payload.restart)
      log.error({ group: group.groupId }, 'kafka consumer will not restart: this subscription stopped consuming')
    owner.lost()
  })

  async function eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const giveUp = new AbortController()
    const stale = () => !isRunning() || isStale()
    await keepAlive(owner.settled(), heartbeat, giveUp, stale)
    if (stale()) return // left unresolved: fetched again
    const records = batch.messages.map(toConsumedRecord)
    const handled = await keepAlive(
      owner.handle(batch.topic, batch.partition, records, giveUp.signal),
      heartbeat,
      giveUp,
      stale,
    )
    if (handled > 0) resolveOffset(records[handled - 1].offset)
  }

  /**
   * Heartbeats while `work` runs (kafkajs only heartbeats between batches), so a long handler or
   * restore keeps the membership; a rebalance meanwhile (a failed heartbeat, a stale batch) makes
   * a failing handler stop retrying, so the group can move on.
   */
  function keepAlive<T>(
    work: Promise<T>,
    heartbeat: () => Promise<void>,
    giveUp: AbortController,
    stale: () => boolean,
  ): Promise<T> {
    const timer = setInterval(() => {
      if (stale()) giveUp.abort()
      heartbeat().catch(() => giveUp.abort())
    }, config.heartbeatIntervalMs)
    return work.finally(() => clearInterval(timer))
  }

  // On a cluster just started, a broker may not know a topic created a moment ago, or the group
  // coordinator may still be loading: kafkajs gives up on those within its own retries. They pass
  // within seconds, so the join is tried again, as long as topic leaders take to elect.
  await withRetry(
    async () => {
      try {
        await consumer.connect()
        await consumer.subscribe({ topics: group.topics, fromBeginning: group.fromBeginning })
        await consumer.run({
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently: PARTITIONS_CONSUMED_CONCURRENTLY,
          eachBatch,
        })
      } catch (err) {
        await consumer.disconnect().catch(() => {})
        throw err
      }
    },
    {
      policy: retryPolicies.kafkaLeaders,
      shouldRetry: coldCluster,
      onRetry: (err, attempt) =>
        log.warn({ err, group: group.groupId, attempt }, 'joining the consumer group; retrying'),
    },
  )
  return {
    inGroup: () => inGroup,
    async stopFetching() {
      try {
        consumer.pause(group.topics.map((topic) => ({ topic })))
      } catch {
        // not running (restarting after a crash): nothing to pause
      }
    },
    async leave() {
      await consumer
        .disconnect()
        .catch((err) => log.warn({ err, group: group.groupId }, 'kafka consumer disconnect failed'))
    },
  }
}

/** What a cluster answers while it settles after a start or a topic's creation (kafkajs protocol error types). */
const SETTLING = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR',
])

function coldCluster(err: unknown): boolean {
  return errorChain(err).some((e) => SETTLING.has((e as { type?: string }).type ?? ''))
}

/** The leader's plan for a co-partitioned group (`topics`: every member's); every member names it, so all agree. */
const rangeAssigner: PartitionAssigner = ({ cluster }) => ({
  name: 'SluiceRangeAssigner',
  version: 0,
  async assign({ members, topics }) {
    const counts = new Map(topics.map((topic) => [topic, cluster.findTopicPartitionMetadata(topic).length]))
    const subscriptions = new Map(
      members.map((m) => [m.memberId, AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.topics]),
    )
    return [...rangeAssignment(subscriptions, counts)].map(([memberId, owned]) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({
        version: 0,
        assignment: Object.fromEntries(owned.map((a) => [a.topic, a.partitions])),
        userData: Buffer.alloc(0),
      }),
    }))
  },
  protocol: ({ topics }) => ({
    name: 'SluiceRangeAssigner',
    metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }),
  }),
})
