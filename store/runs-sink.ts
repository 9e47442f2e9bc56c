// The run sink: batches of run snapshots from `runs` go into the RunStore. Upserts keep the
// highest version per run, so a redelivered or reordered batch never rolls a run back.
import type { Bus, Subscription } from '../bus/types.ts'
import type { Codec } from '../bus/codec.ts'
import type { RunDoc, RunStore } from './runs-types.ts'

export interface RunSinkDeps { bus: Bus; codec: Codec<RunDoc>; store: RunStore }
export interface RunSinkConfig { group: string; inputTopic: string; maxBatchRecords: number }

export function createRunSink(deps: RunSinkDeps, config: RunSinkConfig) {
  let subscription: Subscription | undefined
  return {
    async start() {
      subscription = await deps.bus.subscribe({
        group: config.group,
        topics: [config.inputTopic],
        maxBatchRecords: config.maxBatchRecords,
        handler: (batch) => deps.store.upsertRuns(batch.records.map((r) => deps.codec.decode(r.value))),
      })
    },
    async stop() {
      await subscription?.stop()
    },
  }
}
