// The router stage: every event on `events` becomes one run record per function its name
// triggers in its environment, on that function's own output (topic). Run IDs derive from
// (event, function), so a redelivered event re-publishes the same runs, which the runner drops.
import type { Logger } from 'pino'
import { createConsumerStage } from '../bus/consumer-stage.ts'
import type { Output } from '../bus/output.ts'
import type { Source } from '../bus/source.ts'
import type { EventRecord } from '../core/event.ts'
import type { FunctionDoc } from '../control/types.ts'
import type { RunDoc } from '../core/run-doc.ts'
import { firstRecord, snapshotOf, type RunRecord } from '../core/run-record.ts'

export interface RouterDeps {
  source: Source<EventRecord>
  /** `env\0event name` → the functions it triggers, read once per batch. */
  triggerIndex(): Map<string, FunctionDoc[]>
  outputs: { runs: Output<RunDoc>; functionRuns(fn: FunctionDoc): Output<RunRecord> }
  log: Logger
}

export interface RouterConfig {
  inputTopic: string
  group: string
  maxBatchRecords: number
}

export function createRouter(deps: RouterDeps, config: RouterConfig) {
  async function route(events: EventRecord[]): Promise<void> {
    const index = deps.triggerIndex()
    if (index.size === 0) return
    const now = Date.now()
    const perFunction = new Map<string, { fn: FunctionDoc; records: RunRecord[] }>()
    const queued: RunDoc[] = []
    for (const event of events) {
      for (const fn of index.get(`${event.env}\0${event.name}`) ?? []) {
        const record = firstRecord(event, fn.key, now)
        const target = perFunction.get(fn.id) ?? perFunction.set(fn.id, { fn, records: [] }).get(fn.id)!
        target.records.push(record)
        queued.push(snapshotOf(record, 'queued'))
      }
    }
    await Promise.all([
      ...[...perFunction.values()].map(({ fn, records }) => deps.outputs.functionRuns(fn).publish(records)),
      deps.outputs.runs.publish(queued),
    ])
  }

  // With no function registered there is nothing to route: events are not even decoded.
  const idle = () => deps.triggerIndex().size === 0
  return createConsumerStage(
    deps.source,
    { group: config.group, topics: [config.inputTopic], maxBatchRecords: config.maxBatchRecords, idle },
    route,
  )
}
