// Cancelling a run whose retry waits for its backoff (the dashboard's Cancel button). The REST API
// writes a cancel record with the seq of the parked retry: whichever of the two the runner
// processes first raises the run's mark to that seq, and the mark drops the other. So a cancel
// that arrives before the retry is due ends the run (the parked record is dropped when it comes
// back), and one that arrives after the retry started is itself dropped: the run goes on.
import type { EventRecord } from '../core/event.ts'
import type { RunDoc } from '../core/run-doc.ts'
import type { Outcome } from './outcome.ts'
import { snapshotOf, type RunRecord } from '../core/run-record.ts'

/** The run is waiting for a retry: `running` with the next attempt's time set. */
export const isParked = (run: RunDoc): boolean => run.status === 'running' && run.nextAttemptAt !== undefined

/** The cancel record for a parked run; its seq is the parked retry's (its snapshot's version is 2·seq). */
export function cancelRecordFor(run: RunDoc, event: EventRecord, nowMs: number): RunRecord {
  if (!isParked(run)) throw new Error(`cancelRecordFor: run ${run.runId} is not waiting for a retry`)
  const retrying = run.steps.find((s) => s.status === 'retrying')
  return {
    runId: run.runId,
    functionId: run.functionId,
    env: run.env,
    event,
    seq: run.version / 2,
    attempt: 0,
    attempts: run.attempts,
    steps: run.steps
      .filter((s) => s.status === 'completed')
      .map((s) => ({ id: s.id, output: s.output, attempts: s.attempts, endedAt: s.endedAt })),
    ...(run.error && {
      failing: { ...(retrying && { stepId: retrying.id }), error: run.error, endedAt: retrying?.endedAt ?? nowMs },
    }),
    queuedAt: run.queuedAt,
    ...(run.startedAt !== undefined && { startedAt: run.startedAt }),
    cancel: { at: nowMs },
  }
}

/** What the runner does with a cancel record: the final snapshot, nothing executed. */
export function cancelled(record: RunRecord, nowMs: number): Outcome {
  return { kind: 'cancelled', run: snapshotOf(record, 'cancelled', { endedAt: nowMs, version: record.seq * 2 + 2 }) }
}
