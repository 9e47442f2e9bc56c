// The plan of a function with flow control (flow-handler.ts applies it): nothing executes as it is read.
// A record that may run is queued for the scheduler; a run's first record passes the gate, whose
// decision (runner/gate.ts) becomes actions here; a cancel ends what is parked or queued, or marks the
// run cancelling. Pure, like plan.ts: the same actions, applied by the flow handler.
import type { CancelCause } from '../core/run-doc.ts'
import type { FlowControl } from '../core/flow.ts'
import type { FunctionSpec } from '../core/function.ts'
import { flowKeys } from '../core/flow-keys.ts'
import { isSignal, snapshotOf, type FunctionRecord, type RunRecord } from '../core/run-record.ts'
import type { RunMark } from './state.ts'
import type { Outcome } from './outcome.ts'
import { cancelled, skipped } from './cancel.ts'
import { resolveDue, resolveSignal } from './waits.ts'
import { held, holds } from './hold.ts'
import { queuePlace } from './scheduler.ts'
import type { Gate } from './gate.ts'
import { ended, resolved, type Action, type PlanContext, type RunView } from './plan.ts'

export interface FlowPlanContext extends PlanContext {
  fn: FunctionSpec
  flow: FlowControl
}

/** A record in the queue: its flow keys (a record made elsewhere, a retry from the REST API, has none yet). */
export function queued(given: RunRecord, ctx: Pick<FlowPlanContext, 'fn' | 'flow'>): Action {
  const r = given.flow ? given : { ...given, flow: flowKeys(ctx.flow, ctx.fn, given.event) }
  return { kind: 'queue', record: { ...r, queue: queuePlace(r) } }
}

/** One item of a run, read from the function's topic. */
export function planFlowRecord(view: RunView, item: FunctionRecord, ctx: FlowPlanContext): Action[] {
  const { mark, parked } = view
  const { nowMs } = ctx
  if (isSignal(item)) {
    const { signal } = item
    if (mark.state === 'ended') return [{ kind: 'skip', why: 'run ended' }]
    if (signal.kind === 'cancel') return [{ kind: 'cancel', runId: item.runId, cause: signal.cause }]
    if (signal.seq <= mark.seq) return [{ kind: 'skip', why: 'pause ended already' }]
    const resolution = parked && parked.seq === signal.seq ? resolveSignal(parked, signal, nowMs) : null
    if (!parked || !resolution) return [{ kind: 'skip', why: 'nothing waits for it' }]
    const unpark: Action = { kind: 'unpark', record: parked }
    if (mark.state === 'cancelling')
      return [unpark, { kind: 'finish', record: parked, outcome: cancelled(parked, mark.cause!, nowMs) }]
    if (resolution.kind === 'fail') return [unpark, resolved(parked, resolution, nowMs, ctx.policy)]
    return [unpark, queued(resolution.record, ctx)]
  }
  const record = item
  if (record.seq <= mark.seq) return [{ kind: 'skip', why: 'duplicate' }]
  if (mark.state === 'cancelling') return [{ kind: 'finish', record, outcome: cancelled(record, mark.cause!, nowMs) }]
  if (record.dueAt !== undefined && record.dueAt > nowMs) return [{ kind: 'park', record }]
  if (holds(record, ctx.paused)) return [{ kind: 'hold', record: held(record) }]
  if (record.seq === 0 && (record.flow === undefined || record.gather)) return [{ kind: 'gate', record }]
  if (record.waiting) {
    const resolution = resolveDue(record, nowMs)
    return [
      resolution.kind === 'fail' ? resolved(record, resolution, nowMs, ctx.policy) : queued(resolution.record, ctx),
    ]
  }
  return [queued(record, ctx)]
}

/** What the gate's decision on `record` (a run's first record) leads to. */
export function planGate(decision: Gate, record: RunRecord, ctx: FlowPlanContext): Action[] {
  const unpark = (replaced?: RunRecord): Action[] => (replaced ? [{ kind: 'unpark', record: replaced }] : [])
  switch (decision.kind) {
    case 'admit':
      return [
        ...unpark(decision.unpark),
        // Runs gathered by debounce or batch were not shown queued by the router: they are now.
        ...(record.gather || decision.record.events || ctx.flow.debounce
          ? [{ kind: 'show' as const, run: snapshotOf(decision.record, 'queued') }]
          : []),
        queued(decision.record, ctx),
      ]
    case 'skip': {
      const outcome = skipped(decision.record, decision.code, decision.message, ctx.nowMs)
      return [{ kind: 'finish', record: decision.record, outcome }]
    }
    case 'park':
      return [
        ...unpark(decision.unpark),
        decision.record.dueAt === undefined ? queued(decision.record, ctx) : { kind: 'park', record: decision.record },
        // An event taken into another run (a batch) is consumed: a redelivery of it is dropped.
        ...(decision.record.runId !== record.runId
          ? [{ kind: 'mark' as const, runId: record.runId, mark: { seq: 0, state: 'ended' as const } }]
          : []),
      ]
    case 'gathered':
      return [{ kind: 'mark', runId: record.runId, mark: { seq: 0, state: 'ended' } }]
    case 'drop':
      return [{ kind: 'skip', why: 'nothing waits for it' }]
    case 'replace':
      return [
        { kind: 'cancel', runId: decision.cancel, cause: { kind: 'singleton', runId: record.runId } },
        queued(decision.record, ctx),
      ]
    default: {
      const unknown: never = decision
      throw new Error(`unknown gate decision ${JSON.stringify(unknown)}`)
    }
  }
}

/** A cancel of a run, once its pending (parked or queued) record, if any, was taken out of the state. */
export function planCancel(
  view: { mark: RunMark; pending: RunRecord | null; running: boolean },
  runId: string,
  cause: CancelCause,
  nowMs: number,
): Action[] {
  const { mark, pending } = view
  if (mark.state === 'ended') return [{ kind: 'skip', why: 'run ended' }]
  if (pending) return [{ kind: 'finish', record: pending, outcome: cancelled(pending, cause, nowMs) }]
  // Its step executes now, or its next record is on its way: that record ends it.
  return [
    ...(view.running ? [{ kind: 'cancel-in-flight' as const, runId, cause }] : []),
    { kind: 'mark', runId, mark: { seq: mark.seq, state: 'cancelling', cause } },
  ]
}

/** A record the scheduler admitted: executed, or ended by a cancel that reached it (`cause`). */
export function planQueued(
  mark: RunMark,
  cause: CancelCause | undefined,
  record: RunRecord,
  nowMs: number,
): Extract<Action, { kind: 'skip' | 'finish' | 'execute' }> {
  if (record.seq <= mark.seq) return { kind: 'skip', why: 'duplicate' }
  // A record past an ended run's mark is its retry (core/run-retry.ts): it runs, as without flow control.
  if (cause) return { kind: 'finish', record, outcome: cancelled(record, cause, nowMs) }
  return { kind: 'execute', record, of: record }
}

/** The mark after an admitted record's outcome: a cancel that arrived while it executed ends the run next. */
export function markAfterQueued(record: RunRecord, outcome: Outcome, pending: CancelCause | undefined): RunMark {
  if (ended(outcome)) return { seq: record.seq, state: 'ended' }
  return pending ? { seq: record.seq, state: 'cancelling', cause: pending } : { seq: record.seq, state: 'open' }
}
