// The router stage: every event on `events` becomes one run record per function it starts (by name,
// cron tick or invocation; router/routes.ts), on that function's own output (topic), with the run's
// cancellations registered with the wait matcher; and it is sent to the matcher for the open waits it
// may match. Run IDs derive from (event, function), so a redelivered event re-publishes the same runs,
// which the runner drops. The stage also runs the wait matcher (router/matcher.ts).
import type { Logger } from 'pino'
import { createConsumerStage } from '../bus/consumer-stage.ts'
import type { Output } from '../bus/output.ts'
import type { Source } from '../bus/source.ts'
import type { EventRecord } from '../core/event.ts'
import type { FunctionDoc } from '../control/types.ts'
import type { RunDoc } from '../core/run-doc.ts'
import { firstRecord, snapshotOf, type FunctionRecord, type RunRecord } from '../core/run-record.ts'
import { routeIndex, routeKeyOf } from './routes.ts'
import type { WaitsTopic } from './waits-topic.ts'
import { cancelRegistrations } from './cancellations.ts'

export interface RouterDeps {
  source: Source<EventRecord>
  /** The registered functions, read once per batch. */
  functions(): FunctionDoc[]
  outputs: { runs: Output<RunDoc>; functionRuns(fn: FunctionDoc): Output<FunctionRecord> }
  waits: WaitsTopic
  log: Logger
}

export interface RouterConfig {
  inputTopic: string
  group: string
  maxBatchRecords: number
}

export function createRouter(deps: RouterDeps, config: RouterConfig) {
  async function route(events: EventRecord[]): Promise<void> {
    // Every wait registered before now is known: an event of this batch received after it is routed to it.
    await deps.waits.refresh()
    const functions = deps.functions()
    const index = routeIndex(functions)
    const now = Date.now()
    const perFunction = new Map<string, { fn: FunctionDoc; records: RunRecord[] }>()
    const queued: RunDoc[] = []
    for (const event of events) {
      for (const fn of index.functionsFor(event)) {
        const record = firstRecord(event, fn.key, now)
        const routeKey = routeKeyOf(fn, event)
        if (routeKey !== undefined) record.routeKey = routeKey
        const { source } = event
        if (source.kind === 'invoke')
          record.invokedBy = {
            runId: source.runId,
            functionKey: source.functionId,
            env: event.env,
            seq: source.seq,
            stepId: source.stepId,
            ...(source.routeKey !== undefined && { routeKey: source.routeKey }),
          }
        const target = perFunction.get(fn.id) ?? perFunction.set(fn.id, { fn, records: [] }).get(fn.id)!
        target.records.push(record)
        // A debounced or batched event starts its run later, if at all: the runner shows it queued then.
        if (!fn.flow?.debounce && !fn.flow?.batchEvents) queued.push(snapshotOf(record, 'queued'))
      }
    }
    const runs = [...perFunction.values()]
    await Promise.all([
      ...runs.map(({ fn, records }) => deps.outputs.functionRuns(fn).publish(records)),
      deps.outputs.runs.publish(queued),
      deps.waits.route(events),
    ])
    // After the runs: a cancel that finds no run yet would end it before it began.
    const cancels = runs.flatMap(({ fn, records }) => records.flatMap((r) => cancelRegistrations(fn, r, now)))
    await deps.waits.output.register(cancels)
  }

  // With no function registered there is nothing to route (and no wait): events are not even decoded.
  const idle = () => deps.functions().length === 0
  return createConsumerStage(
    deps.source,
    { group: config.group, topics: [config.inputTopic], maxBatchRecords: config.maxBatchRecords, idle },
    route,
  )
}
