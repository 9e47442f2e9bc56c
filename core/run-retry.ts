// Retrying a failed run from the REST API (the dashboard's Retry button): the run continues from
// its completed steps, as if its failed attempt had been granted another one. Pure: the caller
// publishes the record to the function's topic and the snapshot to `runs`.
//
// The record's seq is the failed record's seq + 1, so the runner's mark (the failed seq) lets it
// through exactly once: a second click publishes the same seq, which the mark drops. The queued
// snapshot takes version 2·seq + 1 (above the failed snapshot's 2·seq, below what executing the
// record publishes), so the store shows the run queued again and never rolls it back.
import type { EventRecord } from './event.ts'
import type { RunDoc } from './run-doc.ts'
import type { RunRecord } from './run-record.ts'

export function retryOfFailedRun(
  run: RunDoc,
  event: EventRecord,
  /** A batch run's events, all of them: the retry runs with the batch it had. */
  events?: EventRecord[],
): { record: RunRecord; snapshot: RunDoc } {
  if (run.status !== 'failed') throw new Error(`retryOfFailedRun: run ${run.runId} is ${run.status}`)
  // A failed run's snapshot has version 2·seq + 2 (runner/ARCHITECTURE.md), seq that of the failed record.
  const seq = run.version / 2
  const steps = run.steps
    .filter((s) => s.status === 'completed')
    .map((s) => ({ id: s.id, output: s.output, attempts: s.attempts, endedAt: s.endedAt }))
  const record: RunRecord = {
    runId: run.runId,
    functionId: run.functionId,
    env: run.env,
    event,
    ...(events && { events }),
    seq,
    attempt: 0,
    attempts: run.attempts + 1,
    steps,
    queuedAt: run.queuedAt,
    ...(run.startedAt !== undefined && { startedAt: run.startedAt }),
  }
  const { error: _error, output: _output, endedAt: _endedAt, nextAttemptAt: _next, ...kept } = run
  const snapshot: RunDoc = {
    ...kept,
    status: 'queued',
    attempts: record.attempts,
    steps: steps.map((s) => ({ ...s, status: 'completed' as const })),
    version: 2 * seq + 1,
  }
  return { record, snapshot }
}
