// The store sink: batches of `events` and `duplicates` go into the EventStore. Inserts are
// idempotent by internal ID, so a redelivered batch stores nothing twice. With a retention (embedded:
// SLUICE_EVENT_RETENTION_MS) it also deletes what grew older than it, every tenth of it (1 s to 1 h).
import type { Logger } from 'pino'
import type { ConsumedRecord } from '../bus/types.ts'
import type { Source } from '../bus/source.ts'
import { createConsumerStage } from '../bus/consumer-stage.ts'
import type { StoredEvent } from '../core/event.ts'
import { onceEvery } from '../core/retry.ts'
import { retentionCutoff } from './metrics.ts'
import type { EventStore } from './types.ts'

export interface StoreSinkDeps {
  source: Source<StoredEvent>
  /**
   * Stores a batch, idempotent by internal ID; `records[i]` is the record `events[i]` was read from
   * (embedded mode writes its bytes, the event's JSON text, as they are: server/embedded.ts).
   */
  insert(events: StoredEvent[], records: ConsumedRecord[]): Promise<void>
  /** Deletes what is past retention (EventStore.deleteBefore). */
  store: Pick<EventStore, 'deleteBefore'>
  log: Logger
}
export interface StoreSinkConfig {
  group: string
  topics: string[]
  maxBatchRecords: number
  /** Events whose IDs are older than this are deleted; 0 keeps them all. */
  retentionMs: number
}

export function createStoreSink(deps: StoreSinkDeps, config: StoreSinkConfig) {
  const consumer = createConsumerStage(deps.source, config, (events, records) => deps.insert(events, records))
  const { retentionMs } = config
  const deleteBefore = deps.store.deleteBefore?.bind(deps.store)
  if (retentionMs === 0 || !deleteBefore) return consumer
  const failed = onceEvery(60_000)
  let timer: NodeJS.Timeout | undefined
  let pass: Promise<void> | undefined
  let sweptAt = Number.NEGATIVE_INFINITY
  const stopping = new AbortController()
  const expire = async () => {
    const started = Date.now()
    try {
      // The dedup id index is swept by a scan of it: once per retention period (the first pass too).
      const sweepIds = started - sweptAt >= retentionMs
      await deleteBefore(started - retentionMs, { sweepIds, signal: stopping.signal })
      if (stopping.signal.aborted) return
      if (sweepIds) sweptAt = started
      retentionCutoff.set((started - retentionMs) / 1000)
      deps.log.debug({ sweepIds, ms: Date.now() - started }, 'events past retention deleted')
    } catch (err) {
      failed((skipped) => deps.log.warn({ err, skipped }, 'deleting events past retention failed; retrying'))
    }
  }
  return {
    async start() {
      await consumer.start()
      timer = setInterval(
        () => {
          pass ??= expire().finally(() => {
            pass = undefined
          })
        },
        Math.min(Math.max(retentionMs / 10, 1000), 3_600_000),
      )
      timer.unref()
    },
    async stop() {
      clearInterval(timer)
      stopping.abort()
      await pass
      await consumer.stop()
    },
  }
}
