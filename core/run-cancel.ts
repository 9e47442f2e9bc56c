// Cancelling a run (POST /v1/runs/<id>/cancel, a bulk cancel, or a `cancelOn` event): a signal on the
// run's topic. The runner ends the run at once when it holds the run's parked or queued record, else
// marks it `cancelling`, and the run's next record ends it instead of executing (runner/cancel.ts).
import type { CancelCause, RunDoc } from './run-doc.ts'
import type { RunSignal } from './run-record.ts'

/** A run that has not ended: only those can be cancelled. */
export const isCancellable = (run: RunDoc): boolean =>
  run.status === 'queued' || run.status === 'running' || run.status === 'waiting'

export function cancelSignal(runId: string, cause: CancelCause, nowMs: number): RunSignal {
  return { runId, signal: { kind: 'cancel', at: nowMs, cause } }
}
