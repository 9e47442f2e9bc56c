// A Bus subscription as a kafkajs consumer group member. Offsets are resolved only after the
// handler resolved (eachBatchAutoResolve: false), and kafkajs commits resolved offsets after each
// batch: at-least-once. A failing handler is retried (core/retry.ts) on the same records.
//
// onAssign / onRevoke ordering. kafkajs emits GROUP_JOIN synchronously inside joinAndSync, before
// its fetchers start, so every assignment is queued on `transition` before any batch of it can
// arrive; each batch first awaits `transition` and is then handled only if its partition is in
// `owned`, which a partition enters after onAssign resolved and leaves before onRevoke is called.
// onRevoke waits for the partition's in-flight handler. Hence, in this process, onAssign precedes
// every batch of a partition and onRevoke follows its last one. Across processes, kafkajs does not
// rejoin (so the group cannot hand a partition to another member) until its fetchers drained the
// batches in flight; stop() revokes before it leaves the group. A partition kept across a
// rebalance by the same member id is not revoked; a new member id (evicted, crashed) revokes all,
// since another member may have owned the partitions meanwhile.
import type { Logger } from 'pino'
import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs'
import { retryPolicies, withRetry } from '../core/retry.ts'
import { SluiceError } from '../core/errors.ts'
import type { ConsumedRecord, SubscribeOptions, Subscription, TopicPartitions } from './types.ts'

export interface KafkaSubscriberConfig {
  sessionTimeoutMs: number
  /** Default: a third of the session timeout. */
  heartbeatIntervalMs?: number
  partitionsConsumedConcurrently: number
  maxBatchRecords: number
}

interface Owned {
  key: string
  topic: string
  partition: number
  abort: AbortController
  inFlight: Promise<void>
}

/** A subscription, and the partitions it holds now (consumer lag is reported for those). */
export interface KafkaSubscription extends Subscription {
  owned(): Array<{ topic: string; partition: number }>
}

const HANDLER_RETRY = retryPolicies.stageHandler
const ASSIGN_RETRY = retryPolicies.kafkaAssign
const tpKey = (topic: string, partition: number) => `${topic}\0${partition}`

export function toConsumedRecord(message: KafkaMessage): ConsumedRecord {
  return {
    key: message.key?.toString('utf8') ?? '',
    value: message.value ?? Buffer.alloc(0), // a null value (tombstone) is the Bus's empty value
    timestampMs: Number(message.timestamp),
    offset: message.offset,
  }
}

export async function subscribeKafka(
  kafka: Kafka,
  options: SubscribeOptions,
  config: KafkaSubscriberConfig,
  log: Logger,
): Promise<KafkaSubscription> {
  const heartbeatIntervalMs = config.heartbeatIntervalMs ?? Math.max(100, Math.floor(config.sessionTimeoutMs / 3))
  const consumer = kafka.consumer({
    groupId: options.group,
    sessionTimeout: config.sessionTimeoutMs,
    heartbeatInterval: heartbeatIntervalMs,
    maxWaitTimeInMs: 500,
    allowAutoTopicCreation: false,
    retry: { restartOnFailure: async () => true },
  })
  const maxBatch = options.maxBatchRecords ?? config.maxBatchRecords
  const owned = new Map<string, Owned>()
  const stopping = new AbortController()
  let transition: Promise<void> = Promise.resolve()
  let memberId: string | undefined
  let stopped: Promise<void> | undefined

  const enqueue = (step: () => Promise<void>) =>
    (transition = transition
      .then(step)
      .catch((err) => log.error({ err, group: options.group }, 'partition (re)assignment failed')))

  async function reassign(assignment: Record<string, number[]>, revokeAll: boolean): Promise<void> {
    const next = new Set(
      Object.entries(assignment).flatMap(([topic, partitions]) => partitions.map((p) => tpKey(topic, p))),
    )
    const lost = [...owned.values()].filter((o) => revokeAll || !next.has(o.key))
    for (const o of lost) {
      owned.delete(o.key) // no new batch of it starts from here on
      o.abort.abort() // a handler being retried gives up; its batch is redelivered to the next owner
    }
    await Promise.all(lost.map((o) => o.inFlight))
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
    if (gained.length === 0 || stopping.signal.aborted) return
    const assigned = await withRetry(() => options.onAssign?.(grouped(gained)) ?? Promise.resolve(), {
      policy: ASSIGN_RETRY,
      signal: stopping.signal,
      onRetry: (err, attempt) => log.error({ err, group: options.group, attempt }, 'onAssign failed; retrying'),
    }).then(
      () => true,
      () => false,
    )
    if (!assigned || stopping.signal.aborted) return
    for (const g of gained) owned.set(g.key, { ...g, abort: new AbortController(), inFlight: Promise.resolve() })
  }

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const newMember = memberId !== undefined && payload.memberId !== memberId
    memberId = payload.memberId
    void enqueue(() => reassign(payload.memberAssignment, newMember))
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    // kafkajs has left the group; it rejoins (GROUP_JOIN) when it restarts, possibly as a new member.
    log.warn({ err: payload.error, group: options.group, restart: payload.restart }, 'kafka consumer crashed')
    if (!payload.restart)
      log.error({ group: options.group }, 'kafka consumer will not restart: this subscription stopped consuming')
    memberId = undefined
    void enqueue(() => reassign({}, true))
  })

  async function eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const key = tpKey(batch.topic, batch.partition)
    await keepAlive(transition, heartbeat)
    for (let i = 0; i < batch.messages.length; i += maxBatch) {
      const state = owned.get(key)
      // Not (or no longer) ours, or stopping: leave the records unresolved, so they are fetched again.
      if (!state || stopping.signal.aborted || !isRunning() || isStale()) return
      const messages = batch.messages.slice(i, i + maxBatch)
      const giveUp = new AbortController()
      const run = withRetry(
        () =>
          options.handler({ topic: batch.topic, partition: batch.partition, records: messages.map(toConsumedRecord) }),
        {
          policy: HANDLER_RETRY,
          signal: AbortSignal.any([state.abort.signal, giveUp.signal]),
          onRetry: (err, attempt) =>
            log.error(
              { err, group: options.group, topic: batch.topic, partition: batch.partition, attempt },
              'handler failed; redelivering batch',
            ),
        },
      )
      state.inFlight = run.then(
        () => {},
        () => {},
      )
      // A rebalance while the handler keeps failing: stop retrying so the group can move on.
      const handled = await keepAlive(
        run.then(
          () => true,
          () => false,
        ),
        heartbeat,
        () => giveUp.abort(),
      )
      if (!handled) return
      resolveOffset(messages[messages.length - 1].offset)
    }
  }

  /** Heartbeats while `work` runs (kafkajs only heartbeats between batches), so a long handler or restore keeps the membership. */
  function keepAlive<T>(work: Promise<T>, heartbeat: () => Promise<void>, onRebalance?: () => void): Promise<T> {
    const timer = setInterval(() => heartbeat().catch(() => onRebalance?.()), heartbeatIntervalMs)
    return work.finally(() => clearInterval(timer))
  }

  try {
    // On a cluster just started, a broker may not know a topic created a moment ago, or the group
    // coordinator may still be loading: kafkajs gives up on those within its own retries. They
    // pass within seconds, so the join is tried again, as long as topic leaders take to elect.
    await withRetry(
      async () => {
        try {
          await consumer.connect()
          await consumer.subscribe({ topics: options.topics, fromBeginning: options.fromBeginning ?? true })
          await consumer.run({
            eachBatchAutoResolve: false,
            partitionsConsumedConcurrently: config.partitionsConsumedConcurrently,
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
          log.warn({ err, group: options.group, attempt }, 'joining the consumer group; retrying'),
      },
    )
  } catch (err) {
    throw new SluiceError('LOG_UNAVAILABLE', `could not join consumer group ${options.group}`, { cause: err })
  }
  await transition // the first assignment is in place when subscribe resolves, as with the local bus

  return {
    owned: () => [...owned.values()].map(({ topic, partition }) => ({ topic, partition })),
    stop() {
      stopped ??= (async () => {
        stopping.abort()
        try {
          consumer.pause(options.topics.map((topic) => ({ topic })))
        } catch {
          // not running (restarting after a crash): nothing to pause
        }
        await enqueue(() => reassign({}, true)) // onRevoke before leaving, so the next owner starts after it
        await consumer
          .disconnect()
          .catch((err) => log.warn({ err, group: options.group }, 'kafka consumer disconnect failed'))
      })()
      return stopped
    },
  }
}

function grouped(tps: Array<{ topic: string; partition: number }>): TopicPartitions[] {
  const byTopic = new Map<string, number[]>()
  for (const { topic, partition } of tps) byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition])
  return [...byTopic].map(([topic, partitions]) => ({ topic, partitions: partitions.sort((a, b) => a - b) }))
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
  for (
    let e = err as { type?: string; originalError?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    depth++
  ) {
    if (e.type !== undefined && SETTLING.has(e.type)) return true
    e = (e.originalError ?? e.cause) as typeof e
  }
  return false
}
