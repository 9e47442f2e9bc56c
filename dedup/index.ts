// The dedup stage: first (env, id) within the window passes to `events`, later ones go to
// `duplicates` with the internal ID they duplicate. See ARCHITECTURE.md.
import type { Logger } from 'pino'
import type { ConsumedRecord, Subscription } from '../bus/types.ts'
import type { Output } from '../bus/output.ts'
import type { Consumed, Source } from '../bus/source.ts'
import type { EventRecord, StoredEvent } from '../core/event.ts'
import type { DedupStore } from './types.ts'
import { dedupEvents } from './metrics.ts'

const counted = { accepted: dedupEvents.labels('accepted'), duplicate: dedupEvents.labels('duplicate') }

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
    // An event without a caller `id` is keyed by its fresh internal ID, which nothing earlier can
    // hold (a redelivery or a seeded retry finds itself, and passes anyway): only caller ids are read.
    const withId = events.filter((e) => e.id !== e.internalId)
    // Without caller ids, each event's key is its own internal ID: every one passes.
    const { accepted, duplicates } =
      withId.length === 0
        ? { accepted: events.map((value, i) => ({ value, record: records[i] })), duplicates: [] }
        : split(events, records, withId, await store.lookup(withId))
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

  /** The first (env, id) of the batch or the window passes; a later one is a duplicate of it. */
  function split(events: EventRecord[], records: ConsumedRecord[], withId: EventRecord[], found: Array<string | null>) {
    const earlier = new Map(withId.map((e, i) => [e, found[i]]))
    const firstInBatch = new Map<string, string>()
    const accepted: Consumed<EventRecord>[] = []
    const duplicates: StoredEvent[] = []
    events.forEach((event, i) => {
      const key = `${event.env}\0${event.id}`
      const original = firstInBatch.get(key) ?? earlier.get(event)
      // A redelivered record finds itself: it is the original, published again (idempotent downstream).
      if (original && original !== event.internalId) return void duplicates.push({ ...event, duplicateOf: original })
      if (!firstInBatch.has(key)) firstInBatch.set(key, event.internalId)
      accepted.push({ value: event, record: records[i] })
    })
    return { accepted, duplicates }
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
