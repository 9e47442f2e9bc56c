// A Bus subscription on @platformatic/kafka: the client keeps the group membership (join, sync,
// heartbeats in the background, rejoin on a rebalance); the fetching is ours, one loop over the
// owned partitions with the client's plain Fetch (kafka-platformatic-fetch.ts), so a batch is committed
// only after its handler resolved (at-least-once) and a failing handler is retried on the same
// records (core/retry.ts). The client's heartbeat runs whatever the handler does: no keep-alive.
//
// onAssign / onRevoke ordering, as in kafka-subscriber.ts. The client calls `protocolsMetadata`
// before every JoinGroup, first join and rebalances alike; there the fetch loops of the ending
// generation are stopped and awaited (a handler being retried gives up, its batch is not
// committed), so this member rejoins, and the group can hand a partition to another member, only
// once no batch of it is in flight here. The join's assignment then revokes what was lost
// (onRevoke), assigns what was gained (onAssign, before any batch of it) and restarts the loop
// over the owned partitions from their committed offsets. A new member id (evicted) revokes all.
import type { Logger } from 'pino'
import { Consumer, ListOffsetTimestamps, type ConsumerGroupJoinPayload } from '@platformatic/kafka'
import { setTimeout as sleep } from 'node:timers/promises'
import { retryPolicies, withRetry } from '../core/retry.ts'
import { SluiceError } from '../core/errors.ts'
import type { SubscribeOptions, Subscription, TopicPartitions } from './types.ts'
import { fetchPartitions, type ClientOptions } from './kafka-platformatic-fetch.ts'

export interface PlatformaticSubscriberConfig {
  sessionTimeoutMs: number
  /** Default: a third of the session timeout. */
  heartbeatIntervalMs?: number
  maxBatchRecords: number
}

/** Committed and end offsets of one partition of a group: its lag is `end - committed`. */
export interface PartitionOffsets {
  topic: string
  partition: number
  /** -1 while the group has committed nothing there. */
  committed: bigint
  end: bigint
}

export interface PlatformaticSubscription extends Subscription {
  /** The group's committed offset and the end offset of every partition of its topics (for metrics). */
  offsets(): Promise<PartitionOffsets[]>
}

const HANDLER_RETRY = retryPolicies.stageHandler
const ASSIGN_RETRY = retryPolicies.kafkaAssign
const FETCH_PAUSE_MS = 500
const tpKey = (topic: string, partition: number) => `${topic}\0${partition}`

export async function subscribePlatformatic(
  client: ClientOptions,
  options: SubscribeOptions,
  config: PlatformaticSubscriberConfig,
  log: Logger,
): Promise<PlatformaticSubscription> {
  const heartbeatInterval = config.heartbeatIntervalMs ?? Math.max(100, Math.floor(config.sessionTimeoutMs / 3))
  const maxBatch = options.maxBatchRecords ?? config.maxBatchRecords
  const fromBeginning = options.fromBeginning ?? true
  const owned = new Map<string, { key: string; topic: string; partition: number }>()
  const stopping = new AbortController()
  let generation = { abort: new AbortController(), loops: [] as Promise<void>[] }
  let transition: Promise<void> = Promise.resolve()
  let memberId: string | undefined
  let stopped: Promise<void> | undefined

  const enqueue = (step: () => Promise<void>) =>
    (transition = transition
      .then(step)
      .catch((err) => log.error({ err, group: options.group }, 'partition (re)assignment failed')))

  /** Ends the current generation's fetch loop: no batch is in flight when this resolves. */
  async function drain(): Promise<void> {
    generation.abort.abort()
    await Promise.all(generation.loops)
  }

  const consumer = new Consumer({
    ...client,
    groupId: options.group,
    sessionTimeout: config.sessionTimeoutMs,
    heartbeatInterval,
    rebalanceTimeout: Math.max(config.sessionTimeoutMs, 10_000),
    // Called before every JoinGroup: the hook that lets in-flight batches end first.
    protocolsMetadata: async () => {
      await drain()
      return Buffer.alloc(0)
    },
  })

  async function reassign(assignment: Array<{ topic: string; partitions: number[] }>, revokeAll: boolean) {
    const next = new Set(assignment.flatMap(({ topic, partitions }) => partitions.map((p) => tpKey(topic, p))))
    await drain()
    const lost = [...owned.values()].filter((o) => revokeAll || !next.has(o.key))
    for (const o of lost) owned.delete(o.key)
    if (lost.length > 0)
      await options
        .onRevoke?.(grouped(lost))
        .catch((err) => log.error({ err, group: options.group }, 'onRevoke failed'))
    const gained = [...next]
      .filter((key) => !owned.has(key))
      .map((key) => {
        const [topic, partition] = key.split('\0')
        return { key, topic, partition: Number(partition) }
      })
    if (stopping.signal.aborted) return
    if (gained.length > 0) {
      const assigned = await withRetry(() => options.onAssign?.(grouped(gained)) ?? Promise.resolve(), {
        policy: ASSIGN_RETRY,
        signal: stopping.signal,
        onRetry: (err, attempt) => log.error({ err, group: options.group, attempt }, 'onAssign failed; retrying'),
      }).then(
        () => true,
        () => false,
      )
      if (!assigned || stopping.signal.aborted) return
      for (const g of gained) owned.set(g.key, g)
    }
    const abort = new AbortController()
    const parts = [...owned.values()]
    generation = { abort, loops: parts.length > 0 ? [consume(parts, abort.signal)] : [] }
  }

  /**
   * Fetches every owned partition (one Fetch per leader), handles each one's records (partitions in
   * parallel), commits, and again, from the committed offsets, until `signal` aborts.
   */
  async function consume(parts: Array<{ key: string; topic: string; partition: number }>, signal: AbortSignal) {
    const offsets = new Map<string, bigint>()
    while (!signal.aborted) {
      try {
        for (const p of parts) if (!offsets.has(p.key)) offsets.set(p.key, await startOffset(p.topic, p.partition))
        const wanted = parts.map((p) => ({ topic: p.topic, partition: p.partition, offset: offsets.get(p.key)! }))
        const fetched = await fetchPartitions(consumer, wanted, FETCH_PAUSE_MS)
        const done: Array<{ topic: string; partition: number; offset: bigint }> = []
        await Promise.all(
          parts.map(async ({ key, topic, partition }) => {
            const f = fetched.get(key)!
            if (f.outOfRange) return void offsets.delete(key) // expired: from the committed or first offset again
            for (let i = 0; i < f.records.length && !signal.aborted; i += maxBatch) {
              const records = f.records.slice(i, i + maxBatch)
              await withRetry(() => options.handler({ topic, partition, records }), {
                policy: HANDLER_RETRY,
                signal,
                onRetry: (err, attempt) =>
                  log.error(
                    { err, group: options.group, topic, partition, attempt },
                    'handler failed; redelivering batch',
                  ),
              })
              offsets.set(key, BigInt(records[records.length - 1].offset) + 1n)
            }
            if (signal.aborted) return
            if (f.next > offsets.get(key)!) offsets.set(key, f.next) // past compacted gaps and control records
            if (f.next > wanted.find((w) => w.topic === topic && w.partition === partition)!.offset)
              done.push({ topic, partition, offset: offsets.get(key)! })
          }),
        )
        if (done.length > 0) await commit(done)
      } catch (err) {
        if (signal.aborted) break // a rebalance or stop: what is not committed goes to the next owner
        log.warn({ err, group: options.group }, 'kafka fetch failed; retrying')
        consumer.clearMetadata()
        await sleep(FETCH_PAUSE_MS)
      }
    }
  }

  async function commit(done: Array<{ topic: string; partition: number; offset: bigint }>): Promise<void> {
    // A commit refused because the group is rebalancing only means the batches are redelivered.
    await consumer
      .commit({ offsets: done.map((d) => ({ ...d, leaderEpoch: -1 })) })
      .catch((err) => log.warn({ err, group: options.group }, 'kafka offset commit failed'))
  }

  async function startOffset(topic: string, partition: number): Promise<bigint> {
    const committed = (await consumer.listCommittedOffsets({ topics: [{ topic, partitions: [partition] }] }))
      .get(topic)
      ?.at(partition)
    if (committed !== undefined && committed >= 0n) return committed
    const reset = fromBeginning ? ListOffsetTimestamps.EARLIEST : ListOffsetTimestamps.LATEST
    const offsets = await consumer.listOffsets({
      topics: [topic],
      partitions: { [topic]: [partition] },
      timestamp: reset,
    })
    return offsets.get(topic)?.at(partition) ?? 0n
  }

  consumer.on('consumer:group:join', (payload: ConsumerGroupJoinPayload) => {
    const newMember = memberId !== undefined && payload.memberId !== memberId
    memberId = payload.memberId
    void enqueue(() => reassign(payload.assignments ?? [], newMember))
  })
  consumer.on('error', (err: Error) => {
    // A rejoin that failed for good (the broker was away longer than the client's retries).
    if (stopping.signal.aborted) return
    log.warn({ err, group: options.group }, 'kafka consumer group error; rejoining')
    void enqueue(async () => {
      await sleep(1000)
      if (!stopping.signal.aborted) await consumer.joinGroup({}).catch(() => {})
    })
  })

  try {
    for (const topic of options.topics) consumer.topics.track(topic)
    await consumer.joinGroup({})
  } catch (err) {
    await consumer.close(true).catch(() => {})
    throw new SluiceError('LOG_UNAVAILABLE', `could not join consumer group ${options.group}`, { cause: err })
  }
  await transition // the first assignment is in place when subscribe resolves, as with the local bus

  return {
    stop() {
      stopped ??= (async () => {
        stopping.abort()
        await enqueue(() => reassign([], true)) // onRevoke before leaving, so the next owner starts after it
        await consumer
          .close(true)
          .catch((err) => log.warn({ err, group: options.group }, 'kafka consumer close failed'))
      })()
      return stopped
    },
    async offsets() {
      const metadata = await consumer.metadata({ topics: options.topics })
      const topics = options.topics.map((topic) => ({
        topic,
        partitions: [...Array(metadata.topics.get(topic)?.partitionsCount ?? 0).keys()],
      }))
      const committed = await consumer.listCommittedOffsets({ topics })
      const ends = await consumer.listOffsets({ topics: options.topics, timestamp: ListOffsetTimestamps.LATEST })
      return topics.flatMap(({ topic, partitions }) =>
        partitions.map((partition) => ({
          topic,
          partition,
          committed: committed.get(topic)?.at(partition) ?? -1n,
          end: ends.get(topic)?.at(partition) ?? 0n,
        })),
      )
    },
  }
}

function grouped(tps: Array<{ topic: string; partition: number }>): TopicPartitions[] {
  const byTopic = new Map<string, number[]>()
  for (const { topic, partition } of tps) byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition])
  return [...byTopic].map(([topic, partitions]) => ({ topic, partitions: partitions.sort((a, b) => a - b) }))
}
