// The run store: keeps the newest snapshot (core/run-doc.ts) per run.
import type { RunDoc, RunStatus } from '../core/run-doc.ts'

export type { RunDoc, RunError, RunStatus, StepDoc } from '../core/run-doc.ts'
export { RUN_STATUSES } from '../core/run-doc.ts'

export interface RunQuery {
  functionId?: string
  status?: RunStatus
  eventId?: string
  env?: string
  limit: number
  /** The run ID of the last run of the previous page: results continue below it. */
  cursor?: string
}

export interface RunPage {
  runs: RunDoc[]
  nextCursor: string | null
}

/** Runs, newest first (descending run ID: run IDs carry their event's time). */
export interface RunStore {
  /** Idempotent by run ID: keeps, per run, the snapshot with the highest version. */
  upsertRuns(runs: RunDoc[]): Promise<void>
  getRun(runId: string): Promise<RunDoc | null>
  queryRuns(query: RunQuery): Promise<RunPage>
  close(): Promise<void>
}
