// How a run ends without executing further: cancelled (a cancel signal, core/run-cancel.ts), or skipped
// by flow control. The runner ends a run at once when it holds the run's parked record (a retry or a
// pause), else marks it `cancelling`, and the run's next record ends it instead of executing: the step
// in flight, if any, finishes; nothing after it runs. A cancel of a run that ended is dropped.
import type { CancelCause } from '../core/run-doc.ts'
import { snapshotOf, type RunRecord } from '../core/run-record.ts'
import type { Outcome } from './outcome.ts'

/** The final snapshot of a run cancelled at `record` (its parked record, or the next one it reached). */
export function cancelled(record: RunRecord, cause: CancelCause, nowMs: number): Outcome {
  const by =
    cause.kind === 'api'
      ? 'POST /v1/runs/<id>/cancel'
      : cause.kind === 'event'
        ? `event ${cause.eventName} (${cause.eventId})`
        : `run ${cause.runId} of the same singleton key`
  const run = snapshotOf(record, 'cancelled', {
    endedAt: nowMs,
    version: record.seq * 2 + 2,
    error: { name: 'RunCancelled', code: 'RUN_CANCELLED', message: `cancelled by ${by}`, cancelledBy: cause },
  })
  // A retry is not waited for any longer; a pause stays shown: what the run waited for when cancelled.
  run.steps = run.steps.filter((s) => s.status !== 'retrying')
  delete run.nextAttemptAt
  return { kind: 'cancelled', run }
}

/** A run flow control did not start (a rate limit, idempotency, a singleton): shown, with why. */
export function skipped(record: RunRecord, code: string, message: string, nowMs: number): Outcome {
  const run = snapshotOf(record, 'skipped', {
    endedAt: nowMs,
    version: record.seq * 2 + 2,
    error: { name: 'RunSkipped', code, message },
  })
  return { kind: 'skipped', run }
}
