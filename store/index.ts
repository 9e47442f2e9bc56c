// The store sink: batches of `events` and `duplicates` go into the EventStore. Inserts are
// idempotent by internal ID, so a redelivered batch stores nothing twice.
import type { Bus, ConsumedRecord } from '../bus/types.ts'
import type { Codec } from '../bus/codec.ts'
import { createConsumerStage } from '../bus/consumer-stage.ts'
import type { StoredEvent } from '../core/event.ts'
import type { EventStore } from './types.ts'

export interface StoreSinkDeps {
  bus: Bus
  codec: Codec<StoredEvent>
  store: EventStore
}
export interface StoreSinkConfig {
  group: string
  topics: string[]
  maxBatchRecords: number
}

export function createStoreSink(deps: StoreSinkDeps, config: StoreSinkConfig) {
  const texts = deps.codec.jsonText ? (records: ConsumedRecord[]) => records.map((r) => r.value) : () => undefined
  return createConsumerStage(deps.bus, deps.codec, config, (events, records) =>
    deps.store.insertEvents(events, texts(records)),
  )
}
