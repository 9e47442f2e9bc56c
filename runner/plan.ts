// What the runner does with one record or signal of a run, as a value: `planRecord` (and, for a function
// with flow control, runner/flow-plan.ts) reads what the runner knows of the run and returns actions;
// the runner's applier (function-runner.ts, flow-handler.ts) executes, publishes and writes them. Pure:
// no I/O, the time is passed in, so every decision of the runner is a table of cases (tests/functions/plan*).
import type { CancelCause, RunDoc } from '../core/run-doc.ts'
import { isSignal, type FunctionRecord, type RunRecord } from '../core/run-record.ts'
import type { RetryPolicy } from '../core/retry.ts'
import type { RunMark } from './state.ts'
import { decide, type Outcome } from './outcome.ts'
import { cancelled } from './cancel.ts'
import { resolveDue, resolveSignal, type Resolution } from './waits.ts'
import { held, holds } from './hold.ts'

/** What the runner knows of a run when one of its records arrives. */
export interface RunView {
  mark: RunMark
  /** Its record parked now (by this batch, or before), if any. */
  parked: RunRecord | null
}

export interface PlanContext {
  nowMs: number
  /** Whether the function is paused (its new runs are held, runner/hold.ts). */
  paused: boolean
  policy: RetryPolicy
}

export type Action =
  /** Nothing to do, and why (a duplicate, a signal to a run that ended, …). */
  | { kind: 'skip'; why: SkipWhy }
  /** Execute `record` up to its next new step; its outcome is that of `of` (the record it resolves). */
  | { kind: 'execute'; record: RunRecord; of: RunRecord; unpark?: RunRecord }
  /** Apply `outcome` to `record` and raise the run's mark to it; `unpark`: the parked record it ends. */
  | { kind: 'finish'; record: RunRecord; outcome: Outcome; unpark?: RunRecord }
  /** Hold `record` in the state until its due time (a retry, a pause, a debounce, a batch's timer). */
  | { kind: 'park'; record: RunRecord }
  /** Let go of a parked record that was resumed or replaced. */
  | { kind: 'unpark'; record: RunRecord }
  /** Into the durable queue, where flow control admits it (`record.queue` says where). */
  | { kind: 'queue'; record: RunRecord }
  /** A paused function's new run: held in the state until it is resumed. */
  | { kind: 'hold'; record: RunRecord }
  | { kind: 'mark'; runId: string; mark: RunMark }
  /** Flow control: a run's first record passes the gate (runner/gate.ts), whose decision is planned in turn. */
  | { kind: 'gate'; record: RunRecord }
  /** Flow control: end a run's pending record, or mark it cancelling (runner/flow-plan.ts `planCancel`). */
  | { kind: 'cancel'; runId: string; cause: CancelCause }
  /** Flow control: the run's step executes now; the record it leads to ends it. */
  | { kind: 'cancel-in-flight'; runId: string; cause: CancelCause }
  /** Publish a snapshot (a gathered run shown queued). */
  | { kind: 'show'; run: RunDoc }

export type SkipWhy = 'duplicate' | 'run ended' | 'pause ended already' | 'nothing waits for it'

export const ended = (o: Outcome): boolean =>
  o.kind === 'completed' || o.kind === 'failed' || o.kind === 'cancelled' || o.kind === 'skipped'

/** The mark after `record`'s outcome: ended, or open at its seq. */
export const markAfter = (record: RunRecord, outcome: Outcome): RunMark => ({
  seq: record.seq,
  state: ended(outcome) ? 'ended' : 'open',
})

const skip = (why: SkipWhy): Action[] => [{ kind: 'skip', why }]

/** A resolved pause: executed on, or failed (a timed-out invocation, an invoked run that failed). */
export function resolved(
  of: RunRecord,
  resolution: Resolution,
  nowMs: number,
  policy: RetryPolicy,
  unpark?: RunRecord,
) {
  const rest = unpark ? { unpark } : {}
  if (resolution.kind === 'execute') return { kind: 'execute' as const, record: resolution.record, of, ...rest }
  const { stepId, error } = resolution
  const outcome = decide(of, { kind: 'error', stepId, error, nonRetriable: true }, policy, nowMs, nowMs)
  return { kind: 'finish' as const, record: of, outcome, ...rest }
}

/** The function runner's plan for one item of a run (no flow control): see ARCHITECTURE.md. */
export function planRecord(view: RunView, item: FunctionRecord, ctx: PlanContext): Action[] {
  const { mark } = view
  const { nowMs } = ctx
  const parked = view.parked && view.parked.seq > mark.seq ? view.parked : null
  if (isSignal(item)) {
    const { signal } = item
    if (mark.state === 'ended') return skip('run ended')
    if (signal.kind === 'cancel') {
      if (parked)
        return [{ kind: 'finish', record: parked, outcome: cancelled(parked, signal.cause, nowMs), unpark: parked }]
      // The step in flight finishes; the run's next record ends it.
      return [{ kind: 'mark', runId: item.runId, mark: { seq: mark.seq, state: 'cancelling', cause: signal.cause } }]
    }
    if (signal.seq <= mark.seq) return skip('pause ended already') // timed out, or resumed
    const resolution = parked && parked.seq === signal.seq ? resolveSignal(parked, signal, nowMs) : null
    if (!parked || !resolution) return skip('nothing waits for it')
    if (mark.state === 'cancelling')
      return [{ kind: 'finish', record: parked, outcome: cancelled(parked, mark.cause!, nowMs), unpark: parked }]
    return [resolved(parked, resolution, nowMs, ctx.policy, parked)]
  }
  const record = item
  if (record.seq <= mark.seq) return skip('duplicate')
  if (mark.state === 'cancelling') return [{ kind: 'finish', record, outcome: cancelled(record, mark.cause!, nowMs) }]
  if (holds(record, ctx.paused)) return [{ kind: 'hold', record: held(record) }]
  if (record.dueAt !== undefined && record.dueAt > nowMs) return [{ kind: 'park', record }]
  if (record.waiting) return [resolved(record, resolveDue(record, nowMs), nowMs, ctx.policy)]
  return [{ kind: 'execute', record, of: record }]
}
