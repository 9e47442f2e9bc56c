// How the event path's stages (ingest → incoming → dedup → events → store sink, router) meet the
// bus and the event store. Distributed mode: plain outputs and codecs (`plainEventPath`). Embedded
// mode (server/embedded.ts): the local log hands the Event API's values from stage to stage, the event
// store keeps the JSON text it read, and ingest waits while the pipeline is behind. The stages see
// only Outputs, Sources and callbacks, the same in both modes.
import type { Bus, ConsumedRecord } from '../bus/types.ts'
import type { Codec } from '../bus/codec.ts'
import { createOutput, type Output } from '../bus/output.ts'
import { createSource, type Source } from '../bus/source.ts'
import type { EventRecord, StoredEvent } from '../core/event.ts'
import type { EventStore } from '../store/types.ts'
import type { Routing } from '../router/index.ts'

export interface EventPath {
  /**
   * An output whose values are never changed once published (ingest's, dedup's): consumers through
   * `source` in this process may take `shareOf(value)` instead of decoding its record.
   */
  output<T>(
    topic: string,
    codec: Pick<Codec<T>, 'encode'>,
    keyOf: (value: T) => string,
    shareOf: (value: T) => unknown,
  ): Output<T>
  /** What dedup, the store sink and the router read through. */
  source<T>(codec: Codec<T>): Source<T>
  /** The store sink's write: `records[i]` is the record `events[i]` was read from. */
  insertEvents(events: StoredEvent[], records: ConsumedRecord[]): Promise<void>
  /** Ingest's backpressure: false while a stage reading `topics` stays too far behind (Kafka needs none). */
  settle?(topics: string[]): Promise<boolean>
  /**
   * Embedded mode: `incoming` as an output that deduplicates, stores and routes what it is given
   * in one write (one-pass/index.ts), `routing` being the router's once the function parts exist.
   */
  onePass?(routing: () => Routing | undefined): Output<EventRecord>
}

export function plainEventPath(bus: Bus, store: EventStore): EventPath {
  return {
    output: (topic, codec, keyOf) => createOutput(bus, topic, codec, keyOf),
    source: (codec) => createSource(bus, codec),
    insertEvents: (events) => store.insertEvents(events),
  }
}
