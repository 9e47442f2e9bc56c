// The local log's consumer groups (bus/ARCHITECTURE.md): one member each, in this process, holding
// every partition of its topics; a loop per partition reads whole record batches from its committed
// offset, hands them to the handler, and commits after it. From the groups' positions come consumer
// lag, the release of shared values, and backpressure (settle).
import type { Logger } from 'pino'
import type { Rocks } from '../core/rocks.ts'
import { retryPolicies, withRetry } from '../core/retry.ts'
import type { Batch, ConsumerLag, SubscribeOptions, Subscription, TopicPartitions } from './types.ts'
import { offsetKey } from './local-layout.ts'
import { read, releaseShared, wake, type PartitionState } from './local-tail.ts'
import type { Offsets } from './local-offsets.ts'
import type { TopicState } from './local-writer.ts'

export interface GroupsConfig {
  maxBatchRecords: number
  lingerMs?: number
}

/** A partition a live subscription consumes, and the key its offset is committed under. */
interface Position {
  partition: PartitionState
  key: string
}

export function createGroups(
  rocks: Rocks,
  log: Logger,
  topicState: (topic: string) => TopicState,
  offsets: Offsets,
  config: GroupsConfig,
) {
  const groups = new Set<string>()
  const subscriptions = new Map<Subscription, { label: string; positions: Position[] }>()
  /**
   * The live positions on each topic. Backpressure (every Event API request) and the release of
   * shared values (every commit) read one topic's, not every group's: each function has a runner
   * group on a topic of its own, so walking all of them cost a request more with every function.
   */
  const byTopic = new Map<string, Position[]>()
  /** Publishers waiting for the pipeline: woken on commits, which is when a backlog shrinks. */
  const settling = new Set<{ topics: string[]; limit: number; done: (settled: boolean) => void }>()

  async function subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (groups.has(options.group)) throw new Error(`group ${options.group} already has a member in this process`)
    groups.add(options.group)
    const abort = new AbortController()
    const assigned: TopicPartitions[] = options.topics.map((topic) => ({
      topic,
      partitions: topicState(topic).partitions.map((_, p) => p),
    }))
    await options.onAssign?.(assigned)
    const maxBatch = options.maxBatchRecords ?? config.maxBatchRecords
    const positions = assigned.flatMap(({ topic, partitions }) =>
      partitions.map((p) => ({ partition: topicState(topic).partitions[p], key: offsetKey(options.group, topic, p) })),
    )
    const loops = positions.map((position) => consume(position))

    async function consume({ partition: p, key }: Position): Promise<void> {
      const stored = await rocks.get(key)
      let next = stored ? Number(stored.toString()) : options.fromBeginning === false ? p.durable : 0
      offsets.start(key, next)
      while (!abort.signal.aborted) {
        if (next >= p.durable) {
          await new Promise<void>((woken) => p.waiters.push(woken)) // stop() wakes it too
          if (config.lingerMs) await new Promise((linger) => setTimeout(linger, config.lingerMs))
          continue
        }
        const { records, next: end } = await read(rocks, p, next, p.durable, maxBatch)
        if (records.length > 0) {
          const batch: Batch = { topic: p.topic, partition: p.partition, records }
          const handled = await withRetry(() => options.handler(batch), {
            policy: retryPolicies.stageHandler,
            signal: abort.signal,
            onRetry: (err, attempt) =>
              log.error(
                { err, group: options.group, topic: p.topic, partition: p.partition, attempt },
                'handler failed; redelivering batch',
              ),
          }).then(
            () => true,
            () => false,
          )
          if (!handled) return // stopped while retrying
        }
        next = end
        offsets.commit(key, next)
        if (settling.size > 0) wakeSettled()
        releaseShared(p, handledByAll(p))
      }
    }

    const subscription: Subscription = {
      async stop() {
        abort.abort()
        for (const { partition } of positions) wake(partition)
        await Promise.allSettled(loops)
        await offsets.write()
        await options.onRevoke?.(assigned)
        groups.delete(options.group)
        subscriptions.delete(subscription)
        for (const position of positions) {
          const onTopic = (byTopic.get(position.partition.topic) ?? []).filter((q) => q !== position)
          if (onTopic.length > 0) byTopic.set(position.partition.topic, onTopic)
          else byTopic.delete(position.partition.topic)
        }
      },
    }
    subscriptions.set(subscription, { label: options.metricsGroup ?? options.group, positions })
    for (const position of positions) {
      const onTopic = byTopic.get(position.partition.topic)
      if (onTopic) onTopic.push(position)
      else byTopic.set(position.partition.topic, [position])
    }
    return subscription
  }

  /** Where every live group of the partition has handled up to. */
  function handledByAll(p: PartitionState): number {
    let handled = Number.POSITIVE_INFINITY
    for (const { partition, key } of byTopic.get(p.topic) ?? [])
      if (partition === p) handled = Math.min(handled, offsets.committed.get(key) ?? 0)
    return handled
  }

  /** The most records a live group has yet to handle on one partition of `topics`. */
  function backlog(topics: string[]): number {
    let most = 0
    for (const topic of topics) {
      for (const { partition, key } of byTopic.get(topic) ?? []) {
        const next = offsets.committed.get(key)
        // A group whose loop has not read its committed offset yet is only starting.
        if (next !== undefined) most = Math.max(most, partition.durable - next)
      }
    }
    return most
  }

  /**
   * Resolves true once no live group has more than `limit` records left to handle on a partition of
   * `topics` (at once when none has), false after `timeoutMs` or when the log closes.
   */
  function settle(topics: string[], limit: number, timeoutMs: number): Promise<boolean> {
    if (backlog(topics) <= limit) return Promise.resolve(true)
    return new Promise((resolve) => {
      const waiter = {
        topics,
        limit,
        done: (settled: boolean) => {
          settling.delete(waiter)
          clearTimeout(timer)
          resolve(settled)
        },
      }
      const timer = setTimeout(() => waiter.done(false), timeoutMs)
      settling.add(waiter)
    })
  }

  function wakeSettled(): void {
    const backlogs = new Map<string[], number>() // waiters mostly share their topics: computed once per commit
    for (const waiter of settling) {
      const behind =
        backlogs.get(waiter.topics) ?? backlogs.set(waiter.topics, backlog(waiter.topics)).get(waiter.topics)!
      if (behind <= waiter.limit) waiter.done(true)
    }
  }

  async function consumerLag(): Promise<ConsumerLag[]> {
    const lags: ConsumerLag[] = []
    for (const { label, positions } of subscriptions.values()) {
      for (const { partition, key } of positions) {
        const next = offsets.committed.get(key)
        if (next === undefined) continue // its loop has not read its committed offset yet
        lags.push({
          group: label,
          topic: partition.topic,
          partition: partition.partition,
          records: partition.durable - next,
        })
      }
    }
    return lags
  }

  return {
    subscribe,
    settle,
    consumerLag,
    async stopAll(): Promise<void> {
      await Promise.all([...subscriptions.keys()].map((s) => s.stop()))
    },
    /** Once the log is closed: publishers still waiting for the pipeline are answered false. */
    closed(): void {
      for (const waiter of settling) waiter.done(false)
    },
  }
}
