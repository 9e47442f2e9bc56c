// A consumer group member on @platformatic/kafka: the client keeps the membership (join, sync,
// heartbeats in the background, rejoin on a rebalance); the fetching is ours, one loop over the
// partitions the core's PartitionOwner (kafka-subscriber.ts) owns, with the client's plain Fetch
// (kafka-platformatic-fetch.ts), committing only what the owner handled. bus/ARCHITECTURE.md says
// why the client's own consumer stream does not serve, and which protocol rules the loop relies on.
//
// Ordering: the client calls `protocolsMetadata` before every JoinGroup, first join and rebalances
// alike; there the loop is stopped and awaited (a handler being retried gives up, its batch is not
// committed), so this member rejoins, and the group can hand a partition to another member, only
// once no batch is in flight here. The join's assignment goes to the owner, which revokes and
// assigns, and the loop starts again over what it owns, from the committed offsets.
//
// Every client call the loop makes is abandoned when the loop is stopped (`untilAborted`): the
// client's commit, on a generation the broker no longer knows (a session that expired while the
// broker was unreachable), rejoins from inside the call, and that join's `protocolsMetadata` waits
// for this loop, which would otherwise wait for the commit for ever, leaving the group empty.
import type { Logger } from 'pino'
import {
  Consumer,
  ListOffsetTimestamps,
  type ConsumerGroupJoinPayload,
  type GroupPartitionsAssigner,
} from '@platformatic/kafka'
import { sleep } from '../core/retry.ts'
import type { TopicPartitions } from './types.ts'
import type { KafkaBusConfig } from './kafka-config.ts'
import { tpKey, type GroupMember, type GroupOptions, type PartitionOwner } from './kafka-port.ts'
import { fetchPartitions, type ClientOptions } from './kafka-platformatic-fetch.ts'
import { rangeAssignment } from './kafka-range-assignment.ts'

/** How long a Fetch waits for records, and the pause after a failed one. */
const FETCH_WAIT_MS = 500
/** The client's JoinGroup gives up on a broker away longer than its retries; the member asks again after this. */
const REJOIN_PAUSE_MS = 1000

interface Part {
  key: string
  topic: string
  partition: number
}

export async function joinPlatformaticGroup(
  client: ClientOptions,
  group: GroupOptions,
  owner: PartitionOwner,
  config: Pick<KafkaBusConfig, 'sessionTimeoutMs' | 'heartbeatIntervalMs' | 'instanceId'>,
  log: Logger,
): Promise<GroupMember> {
  let loop = { abort: new AbortController(), done: Promise.resolve() }
  let leaving = false

  /** Ends the fetch loop: no batch is in flight when this resolves. */
  async function halt(): Promise<void> {
    loop.abort.abort()
    await loop.done
  }

  /** Starts the loop over what the owner now holds, once the previous loop ended: one Fetch at a time per consumer. */
  function fetch(owned: TopicPartitions[] | undefined): void {
    if (!owned) return
    const parts = owned.flatMap(({ topic, partitions }) =>
      partitions.map((partition) => ({ key: tpKey(topic, partition), topic, partition })),
    )
    const previous = loop
    const abort = new AbortController()
    previous.abort.abort()
    loop = { abort, done: previous.done.then(() => (parts.length > 0 ? consume(parts, abort.signal) : undefined)) }
  }

  const consumer = new Consumer({
    ...client,
    groupId: group.groupId,
    ...(config.instanceId !== undefined && { groupInstanceId: `${config.instanceId}.${group.groupId}` }),
    sessionTimeout: config.sessionTimeoutMs,
    heartbeatInterval: config.heartbeatIntervalMs,
    rebalanceTimeout: Math.max(config.sessionTimeoutMs, 10_000),
    ...(group.coPartitioned && { partitionAssigner: rangeAssigner }),
    // Called before every JoinGroup: the hook that lets in-flight batches end first.
    protocolsMetadata: async () => {
      owner.rejoining()
      await halt()
      return Buffer.alloc(0)
    },
  })

  /**
   * Fetches every owned partition (one Fetch per leader), hands each one's records to the owner
   * (partitions in parallel), commits what it handled, and again, until `signal` aborts.
   */
  async function consume(parts: Part[], signal: AbortSignal): Promise<void> {
    const offsets = new Map<string, bigint>()
    while (!signal.aborted) {
      try {
        for (const p of parts)
          if (!offsets.has(p.key)) offsets.set(p.key, await untilAborted(startOffset(p.topic, p.partition), signal))
        const wanted = parts.map((p) => ({ topic: p.topic, partition: p.partition, offset: offsets.get(p.key)! }))
        const fetched = await untilAborted(fetchPartitions(consumer, wanted, FETCH_WAIT_MS), signal)
        const done: typeof wanted = []
        await Promise.all(
          wanted.map(async ({ topic, partition, offset }) => {
            const key = tpKey(topic, partition)
            const f = fetched.get(key)!
            if (f.outOfRange) return void offsets.delete(key) // expired: from the committed or first offset again
            const handled = await owner.handle(topic, partition, f.records, signal)
            let next = handled > 0 ? BigInt(f.records[handled - 1].offset) + 1n : offset
            if (handled === f.records.length && f.next > next) next = f.next // past compacted gaps and control records
            if (next === offset || !owner.owns(topic, partition)) return
            offsets.set(key, next)
            done.push({ topic, partition, offset: next })
          }),
        )
        // A commit refused because the group is rebalancing only means the batches are redelivered.
        if (done.length > 0)
          await untilAborted(
            consumer
              .commit({ offsets: done.map((d) => ({ ...d, leaderEpoch: -1 })) })
              .catch((err) => log.warn({ err, group: group.groupId }, 'kafka offset commit failed')),
            signal,
          )
      } catch (err) {
        if (signal.aborted) break // a rebalance or stop: what is not committed goes to the next owner
        log.warn({ err, group: group.groupId }, 'kafka fetch failed; retrying')
        consumer.clearMetadata()
        await sleep(FETCH_WAIT_MS, signal)
      }
    }
  }

  async function startOffset(topic: string, partition: number): Promise<bigint> {
    const committed = (await consumer.listCommittedOffsets({ topics: [{ topic, partitions: [partition] }] }))
      .get(topic)
      ?.at(partition)
    if (committed !== undefined && committed >= 0n) return committed
    const timestamp = group.fromBeginning ? ListOffsetTimestamps.EARLIEST : ListOffsetTimestamps.LATEST
    const offsets = await consumer.listOffsets({ topics: [topic], partitions: { [topic]: [partition] }, timestamp })
    return offsets.get(topic)?.at(partition) ?? 0n
  }

  let inGroup = true
  consumer.on('consumer:heartbeat:stalled', () => {
    inGroup = false
  })
  consumer.on('consumer:heartbeat:end', () => {
    inGroup = true
  })
  consumer.on('consumer:group:join', (payload: ConsumerGroupJoinPayload) => {
    inGroup = true
    void owner.assigned(payload.memberId, payload.assignments ?? []).then(fetch)
  })
  let rejoining = false
  consumer.on('error', (err: Error) => {
    // A rejoin that failed for good (the broker was away longer than the client's retries): ask
    // again until one succeeds, however long the broker stays away.
    if (leaving || rejoining) return
    log.warn({ err, group: group.groupId }, 'kafka consumer group error; rejoining')
    inGroup = false
    rejoining = true
    void (async () => {
      while (!leaving) {
        await sleep(REJOIN_PAUSE_MS)
        if (leaving) break
        try {
          await consumer.joinGroup({})
          break
        } catch (err) {
          log.warn({ err, group: group.groupId }, 'kafka consumer group rejoin failed; retrying')
        }
      }
      rejoining = false
    })()
  })

  try {
    for (const topic of group.topics) consumer.topics.track(topic)
    await consumer.joinGroup({})
  } catch (err) {
    await consumer.close(true).catch(() => {})
    throw err
  }
  return {
    inGroup: () => inGroup,
    async stopFetching() {
      leaving = true
      await halt()
    },
    async leave() {
      await consumer.close(true).catch((err) => log.warn({ err, group: group.groupId }, 'kafka consumer close failed'))
    },
  }
}

/** `work`, or a rejection once `signal` aborts (the work goes on, unobserved): the loop's calls end with it. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  work.catch(() => {}) // abandoned work may fail later, unobserved
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/** The leader's plan for a co-partitioned group, over every topic a member subscribes to. */
const rangeAssigner: GroupPartitionsAssigner = (_current, members, topics, metadata) => {
  const subscriptions = new Map([...members].map(([id, m]) => [id, m.topics]))
  const all = new Set([...topics, ...[...members.values()].flatMap((m) => m.topics ?? [])])
  const counts = new Map([...all].map((topic) => [topic, metadata.topics.get(topic)?.partitionsCount ?? 0]))
  return [...rangeAssignment(subscriptions, counts)].map(([memberId, owned]) => ({
    memberId,
    assignments: new Map(owned.map((a) => [a.topic, a])),
  }))
}
