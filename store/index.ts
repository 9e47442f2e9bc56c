// The store sink: batches of `events` and `duplicates` go into the EventStore. Inserts are
// idempotent by internal ID, so a redelivered batch stores nothing twice.
import type { Logger } from 'pino'
import type { Bus, Subscription } from '../bus/types.ts'
import type { Codec } from '../bus/codec.ts'
import type { StoredEvent } from '../core/event.ts'
import type { EventStore } from './types.ts'

export interface StoreSinkDeps { bus: Bus; codec: Codec<StoredEvent>; store: EventStore; log: Logger }
export interface StoreSinkConfig { group: string; topics: string[]; maxBatchRecords: number }

export function createStoreSink(deps: StoreSinkDeps, config: StoreSinkConfig) {
  let subscription: Subscription | undefined
  return {
    async start() {
      subscription = await deps.bus.subscribe({
        group: config.group,
        topics: config.topics,
        maxBatchRecords: config.maxBatchRecords,
        handler: (batch) => deps.store.insertEvents(batch.records.map((r) => deps.codec.decode(r.value))),
      })
    },
    async stop() {
      await subscription?.stop()
    },
  }
}
