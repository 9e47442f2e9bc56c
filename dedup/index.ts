// The dedup stage: first (env, id) within the window passes to `events`, later ones go to
// `duplicates` with the internal ID they duplicate. See ARCHITECTURE.md.
import type { Logger } from 'pino'
import type { ConsumedRecord, Subscription } from '../bus/types.ts'
import type { Output } from '../bus/output.ts'
import type { Consumed, Source } from '../bus/source.ts'
import type { EventRecord, StoredEvent } from '../core/event.ts'
import type { DedupStore } from './types.ts'
import { dedupEvents } from './metrics.ts'

export const counted = {
  accepted: dedupEvents.series({ outcome: 'accepted' }),
  duplicate: dedupEvents.series({ outcome: 'duplicate' }),
}

/**
 * The events a lookup must be asked about: those with a caller `id`. An event without one is keyed by
 * its fresh internal ID, which nothing earlier can hold (a redelivery or a seeded retry finds itself,
 * and passes anyway).
 */
export const callerIdEvents = (events: EventRecord[]) => events.filter((e) => e.id !== e.internalId)

/**
 * Per event, the internal ID of the event it repeats, or undefined for one that passes: the first
 * (env, id) of the batch or the window passes, a later one is a duplicate of it. `found[i]` is what a
 * lookup found for `withId[i]` (callerIdEvents of `events`).
 */
export function originalsOf(
  events: EventRecord[],
  withId: EventRecord[],
  found: Array<string | null>,
): Array<string | undefined> {
  const earlier = new Map(withId.map((e, i) => [e, found[i]]))
  const firstInBatch = new Map<string, string>()
  return events.map((event) => {
    if (event.id === event.internalId) return undefined
    const key = `${event.env}\0${event.id}`
    const original = firstInBatch.get(key) ?? earlier.get(event)
    // A redelivered record finds itself: it is the original, published again (idempotent downstream).
    if (original && original !== event.internalId) return original
    if (!firstInBatch.has(key)) firstInBatch.set(key, event.internalId)
    return undefined
  })
}

export interface DedupDeps {
  source: Source<EventRecord>
  /** `events` takes accepted events as they were read: they go on unchanged. */
  outputs: { events: Output<Consumed<EventRecord>>; duplicates: Output<StoredEvent> }
  /** Opens (and, in distributed mode, restores) the state of one partition of the input. */
  openStore(partition: number): Promise<DedupStore>
  log: Logger
}

export interface DedupConfig {
  inputTopic: string
  group: string
  expireIntervalMs: number
}

export function createDedup(deps: DedupDeps, config: DedupConfig) {
  const stores = new Map<number, DedupStore>()
  let subscription: Subscription | undefined
  let expiryTimer: NodeJS.Timeout | undefined

  async function handle(partition: number, events: EventRecord[], records: ConsumedRecord[]): Promise<void> {
    const store = stores.get(partition)
    if (!store) throw new Error(`dedup partition ${partition} has no open store`)
    const withId = callerIdEvents(events)
    const found = withId.length === 0 ? [] : await store.lookup(withId)
    const originals = originalsOf(events, withId, found)
    const accepted: Consumed<EventRecord>[] = []
    const duplicates: StoredEvent[] = []
    events.forEach((value, i) => {
      const original = originals[i]
      if (original === undefined) accepted.push({ value, record: records[i] })
      else duplicates.push({ ...value, duplicateOf: original })
    })
    // An accepted event goes on as it came (`incoming` and `events` share the event codec). Marking
    // it seen at the same time is safe: a crash before it is durable downstream redelivers the
    // batch, and a redelivered event finds its own mark (its internal ID), so it passes again.
    await Promise.all([
      deps.outputs.events.publish(accepted),
      deps.outputs.duplicates.publish(duplicates),
      store.markSeen(accepted.map((a) => a.value)),
    ])
    counted.accepted.inc(accepted.length)
    counted.duplicate.inc(duplicates.length)
  }

  return {
    async start() {
      subscription = await deps.source.subscribe({
        group: config.group,
        topics: [config.inputTopic],
        handler: (batch) =>
          handle(
            batch.partition,
            batch.records.map((r) => deps.source.decode(r)),
            batch.records,
          ),
        onAssign: async (assigned) => {
          // In parallel: in distributed mode each store restores its partition from the changelog.
          const partitions = assigned.flatMap((a) => a.partitions)
          const opened = await Promise.all(partitions.map((p) => deps.openStore(p)))
          partitions.forEach((p, i) => stores.set(p, opened[i]))
        },
        onRevoke: async (revoked) => {
          for (const p of revoked.flatMap((a) => a.partitions)) {
            await stores.get(p)?.close()
            stores.delete(p)
          }
        },
      })
      expiryTimer = setInterval(() => {
        for (const store of stores.values())
          store.expire(Date.now()).catch((err) => deps.log.warn({ err }, 'dedup expiry failed'))
      }, config.expireIntervalMs)
      expiryTimer.unref()
    },
    async stop() {
      clearInterval(expiryTimer)
      await subscription?.stop()
    },
  }
}
