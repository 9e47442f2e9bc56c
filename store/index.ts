// The store sink: batches of `events` and `duplicates` go into the EventStore. Inserts are
// idempotent by internal ID, so a redelivered batch stores nothing twice. It also runs the
// retention passes (store/retention-types.ts): one at start, then every tenth of the shortest
// retention any environment has (1 s to 1 h), with the plan as the environments say it then.
import type { Logger } from 'pino'
import type { ConsumedRecord } from '../bus/types.ts'
import type { Source } from '../bus/source.ts'
import { createConsumerStage } from '../bus/consumer-stage.ts'
import type { StoredEvent } from '../core/event.ts'
import { onceEvery } from '../core/retry.ts'
import { retentionCutoff } from './metrics.ts'
import {
  cutoffsOfKind,
  deletesAnything,
  latestCutoff,
  type RetentionPlan,
  type RetentionStore,
} from './retention-types.ts'

export interface StoreSinkDeps {
  source: Source<StoredEvent>
  /**
   * Stores a batch, idempotent by internal ID; `records[i]` is the record `events[i]` was read from
   * (embedded mode writes its bytes, the event's JSON text, as they are: server/embedded.ts).
   */
  insert(events: StoredEvent[], records: ConsumedRecord[]): Promise<void>
  /** Deletes what is past retention. */
  retention: RetentionStore
  /** What each environment keeps, now (control/retention.ts). */
  retentionPlan(): RetentionPlan
  log: Logger
}
export interface StoreSinkConfig {
  group: string
  topics: string[]
  maxBatchRecords: number
}

const MIN_INTERVAL_MS = 1000
const MAX_INTERVAL_MS = 3_600_000

export function createStoreSink(deps: StoreSinkDeps, config: StoreSinkConfig) {
  const consumer = createConsumerStage(deps.source, config, (events, records) => deps.insert(events, records))
  const failed = onceEvery(60_000)
  let timer: NodeJS.Timeout | undefined
  let pass: Promise<void> | undefined
  let sweptAt = Number.NEGATIVE_INFINITY
  const stopping = new AbortController()
  /** The shortest retention of any kind in the plan, in ms (undefined: nothing is deleted). */
  const shortest = (plan: RetentionPlan, now: number) => {
    const latest = Math.max(...(['events', 'runs', 'requests'] as const).map((k) => latestCutoff(plan, k) ?? 0))
    return latest === 0 ? undefined : now - latest
  }
  const expire = async () => {
    const started = Date.now()
    const plan = deps.retentionPlan()
    if (!deletesAnything(plan)) return
    try {
      // The dedup id index is swept by a scan of it: once per (shortest) retention period, the first pass too.
      const sweepIds = started - sweptAt >= (shortest(plan, started) ?? 0)
      await deps.retention.expire(plan, { sweepIds, signal: stopping.signal })
      if (stopping.signal.aborted) return
      if (sweepIds) sweptAt = started
      const events = cutoffsOfKind(plan, 'events')
      if (!events.includes(undefined)) retentionCutoff.set(Math.min(...(events as number[])) / 1000)
      deps.log.debug({ sweepIds, ms: Date.now() - started }, 'records past retention deleted')
    } catch (err) {
      failed((skipped) => deps.log.warn({ err, skipped }, 'deleting records past retention failed; retrying'))
    }
  }
  const schedule = (delayMs: number) => {
    timer = setTimeout(() => {
      pass ??= expire().finally(() => {
        pass = undefined
        if (stopping.signal.aborted) return
        const tenth = (shortest(deps.retentionPlan(), Date.now()) ?? MAX_INTERVAL_MS * 10) / 10
        schedule(Math.min(Math.max(tenth, MIN_INTERVAL_MS), MAX_INTERVAL_MS))
      })
    }, delayMs)
    timer.unref()
  }
  return {
    async start() {
      await consumer.start()
      schedule(0)
    },
    async stop() {
      clearTimeout(timer)
      stopping.abort()
      await pass
      await consumer.stop()
    },
  }
}
