// Which partitions a Kafka subscription owns, and handing their records to the handler: the core's
// side of a consumer group member (kafka-port.ts PartitionOwner), whichever client keeps the
// membership. A failing handler is retried (core/retry.ts) on the same records; the client commits
// only what `handle` reports handled (at-least-once).
//
// Ordering, in this process: reassignments run one after another (`transition`). A partition enters
// `owned` only after onAssign resolved, and leaves it before onRevoke is called, once its handler in
// flight ended (a handler being retried gives up; its batch is redelivered to the next owner). Every
// batch is handed over only while its partition is owned, so onAssign precedes the first batch of a
// partition and onRevoke follows its last one. A partition kept across a rebalance by the same member
// id is not revoked; a new member id (evicted, crashed) revokes all, since another member may have
// owned the partitions meanwhile. Across processes, each client makes sure no batch is in flight when
// the member rejoins (bus/ARCHITECTURE.md, "Kafka").
import type { Logger } from 'pino'
import { retryPolicies, withRetry } from '../core/retry.ts'
import type { SubscribeOptions, TopicPartitions } from './types.ts'
import { tpKey, type GroupMember, type PartitionOwner } from './kafka-port.ts'

/** Records per batch for a subscription naming no maxBatchRecords (dedup, the control view): the stages' default. */
const DEFAULT_BATCH_RECORDS = 500

const HANDLER_RETRY = retryPolicies.stageHandler
const ASSIGN_RETRY = retryPolicies.kafkaAssign

interface Held {
  key: string
  topic: string
  partition: number
  /** Aborted when the partition is revoked: its handler stops retrying. */
  abort: AbortController
  inFlight: Promise<unknown>
}

export interface OwnedPartitions extends PartitionOwner {
  owned(): Array<{ topic: string; partition: number }>
  /** Stops fetching, revokes every partition (onRevoke), then leaves the group; once. */
  stop(member: GroupMember): Promise<void>
}

/** `options.group` is the group as Kafka knows it (prefixed), as logs name it. */
export function createPartitionOwner(options: SubscribeOptions, log: Logger): OwnedPartitions {
  const group = options.group
  const maxBatch = options.maxBatchRecords ?? DEFAULT_BATCH_RECORDS
  const owned = new Map<string, Held>()
  const stopping = new AbortController()
  let transition: Promise<void> = Promise.resolve()
  let memberId: string | undefined
  /** Bumped by every assignment, loss, rejoin and stop: a reassignment only resumes fetching if it is the latest. */
  let epoch = 0
  let stopped: Promise<void> | undefined

  function enqueue<T>(step: () => Promise<T>): Promise<T | undefined> {
    const run = transition.then(step).catch((err) => {
      log.error({ err, group }, 'partition (re)assignment failed')
      return undefined
    })
    transition = run.then(() => {})
    return run
  }

  async function reassign(next: Set<string>, revokeAll: boolean): Promise<void> {
    const lost = [...owned.values()].filter((o) => revokeAll || !next.has(o.key))
    for (const o of lost) {
      owned.delete(o.key) // no new batch of it starts from here on
      o.abort.abort()
    }
    await Promise.all(lost.map((o) => o.inFlight))
    if (lost.length > 0)
      await options.onRevoke?.(grouped(lost)).catch((err) => log.error({ err, group }, 'onRevoke failed'))
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
      onRetry: (err, attempt) => log.error({ err, group, attempt }, 'onAssign failed; retrying'),
    }).then(
      () => true,
      () => false,
    )
    if (!assigned || stopping.signal.aborted) return
    for (const g of gained) owned.set(g.key, { ...g, abort: new AbortController(), inFlight: Promise.resolve() })
  }

  const ownedList = () => [...owned.values()].map(({ topic, partition }) => ({ topic, partition }))

  return {
    assigned(id, assignment) {
      const newMember = memberId !== undefined && id !== memberId
      memberId = id
      const mine = ++epoch
      const next = new Set(assignment.flatMap(({ topic, partitions }) => partitions.map((p) => tpKey(topic, p))))
      return enqueue(async () => {
        await reassign(next, newMember)
        return mine === epoch && !stopping.signal.aborted ? grouped(ownedList()) : undefined
      })
    },
    lost() {
      memberId = undefined
      epoch++
      void enqueue(() => reassign(new Set(), true))
    },
    rejoining() {
      epoch++
    },
    settled: () => transition,
    owns: (topic, partition) => owned.has(tpKey(topic, partition)),
    async handle(topic, partition, records, signal) {
      let handled = 0
      while (handled < records.length) {
        const held = owned.get(tpKey(topic, partition))
        if (!held || stopping.signal.aborted || signal?.aborted) break
        const batch = records.slice(handled, handled + maxBatch)
        const run = withRetry(() => options.handler({ topic, partition, records: batch }), {
          policy: HANDLER_RETRY,
          signal: signal ? AbortSignal.any([held.abort.signal, signal]) : held.abort.signal,
          onRetry: (err, attempt) =>
            log.error({ err, group, topic, partition, attempt }, 'handler failed; redelivering batch'),
        })
        held.inFlight = run.catch(() => {})
        const done = await run.then(
          () => true,
          () => false,
        )
        if (!done) break
        handled += batch.length
      }
      return handled
    },
    owned: ownedList,
    stop(member) {
      stopped ??= (async () => {
        stopping.abort()
        epoch++
        await member.stopFetching()
        await enqueue(() => reassign(new Set(), true)) // onRevoke before leaving, so the next owner starts after it
        await member.leave()
      })()
      return stopped
    },
  }
}

export function grouped(tps: Array<{ topic: string; partition: number }>): TopicPartitions[] {
  const byTopic = new Map<string, number[]>()
  for (const { topic, partition } of tps) byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition])
  return [...byTopic].map(([topic, partitions]) => ({ topic, partitions: partitions.sort((a, b) => a - b) }))
}
