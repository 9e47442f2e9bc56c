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

export interface RoutingDeps {
  /** The registered functions, read once per batch. */
  functions(): FunctionDoc[]
  outputs: { runs: Output<RunDoc>; functionRuns(fn: FunctionDoc): Output<FunctionRecord> }
  waits: WaitsTopic
}

export interface RouterDeps {
  source: Source<EventRecord>
  routing: Routing
  log: Logger
}

export interface RouterConfig {
  inputTopic: string
  group: string
  maxBatchRecords: number
}

/**
 * Routing, for the router stage and the one-pass event path (one-pass/index.ts). `route` publishes what
 * it writes within the call, before its first await: on the local log one write, with whatever else
 * is published in that tick.
 */
export function createRouting(deps: RoutingDeps) {
  /** The route index of the functions last seen: built again only when a function doc changed (docs are replaced, never edited). */
  let indexed: { functions: FunctionDoc[]; index: ReturnType<typeof routeIndex> } | undefined
  function indexOf(functions: FunctionDoc[]) {
    const same =
      indexed?.functions.length === functions.length && functions.every((f, i) => f === indexed!.functions[i])
    if (!same) indexed = { functions, index: routeIndex(functions) }
    return indexed!.index
  }

  /**
   * The runs and wait messages of `events`, from the wait keys of the last `refresh`. The cancellations
   * of the runs are registered after them, or, `together`, in the same tick (one-pass/index.ts).
   */
  function route(events: EventRecord[], { together = false } = {}): Promise<void> {
    const functions = deps.functions()
    const index = indexOf(functions)
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
    const published = Promise.all([
      ...runs.map(({ fn, records }) => deps.outputs.functionRuns(fn).publish(records)),
      deps.outputs.runs.publish(queued),
      deps.waits.route(events),
    ])
    // After the runs, or with them: a cancel that finds no run yet would end it before it began.
    const cancels = () => runs.flatMap(({ fn, records }) => records.flatMap((r) => cancelRegistrations(fn, r, now)))
    if (together) return Promise.all([published, deps.waits.output.register(cancels(), { together })]).then(() => {})
    return published.then(() => deps.waits.output.register(cancels()))
  }

  return {
    route,
    /** Every wait registered before now is known after it: an event received after it is routed to it. */
    refresh: () => deps.waits.refresh(),
    /** With no function registered there is nothing to route (and no wait). */
    idle: () => deps.functions().length === 0,
  }
}

export type Routing = ReturnType<typeof createRouting>

export function createRouter(deps: RouterDeps, config: RouterConfig) {
  const { routing } = deps
  async function route(events: EventRecord[]): Promise<void> {
    await routing.refresh()
    await routing.route(events)
  }
  // Idle: events are not even decoded.
  return createConsumerStage(
    deps.source,
    { group: config.group, topics: [config.inputTopic], maxBatchRecords: config.maxBatchRecords, idle: routing.idle },
    route,
  )
}
