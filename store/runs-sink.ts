// The run sink: batches of run snapshots from `runs` go into the RunStore. Upserts keep the
// highest version per run, so a redelivered or reordered batch never rolls a run back.
import type { Source } from '../bus/source.ts'
import { createConsumerStage } from '../bus/consumer-stage.ts'
import type { RunDoc, RunStore } from './runs-types.ts'

export interface RunSinkDeps {
  source: Source<RunDoc>
  store: RunStore
}
export interface RunSinkConfig {
  group: string
  inputTopic: string
  maxBatchRecords: number
}

export function createRunSink(deps: RunSinkDeps, config: RunSinkConfig) {
  return createConsumerStage(
    deps.source,
    { group: config.group, topics: [config.inputTopic], maxBatchRecords: config.maxBatchRecords },
    (runs) => deps.store.upsertRuns(runs),
  )
}
