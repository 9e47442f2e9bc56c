// A function run as it is stored and shown: the snapshot the runner publishes to `runs` at every
// transition. Shared by the runner (which makes them) and the run stores (which keep the newest).

/** An error as it crossed from the user's code (name, message, optional code and stack). */
export interface RunError {
  name: string
  message: string
  code?: string
  stack?: string
}

/** `cancelled`: a retry that waited for its backoff was cancelled (POST /v1/runs/<id>/cancel). */
export type RunStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled'
export const RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'completed', 'failed', 'cancelled']

export interface StepDoc {
  id: string
  /** `retrying`: its last attempt threw and a retry waits; `failed`: it failed the run. */
  status: 'completed' | 'retrying' | 'failed'
  /** The step's JSON result (completed steps). */
  output?: unknown
  /** The last error of a step that is being retried or that failed the run. */
  error?: RunError
  /** Executions so far (1 when it succeeded at once). */
  attempts: number
  endedAt: number
}

export interface RunDoc {
  /** A ULID derived from (event internal ID, env, function key): a redelivered event is the same run. */
  runId: string
  /** `<app id>-<function id>`. */
  functionId: string
  env: string
  /** Internal ID of the triggering event. */
  eventId: string
  eventName: string
  status: RunStatus
  /** Attempts spent over the whole run: 1, plus one per retry. */
  attempts: number
  steps: StepDoc[]
  output?: unknown
  error?: RunError
  /** Set while a retry waits for its backoff delay. */
  nextAttemptAt?: number
  queuedAt: number
  startedAt?: number
  endedAt?: number
  /** Grows with every snapshot of the run: the store keeps the highest. */
  version: number
}
