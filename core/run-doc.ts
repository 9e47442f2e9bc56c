// A function run as it is stored and shown: the snapshot the runner publishes to `runs` at every
// transition. Shared by the runner (which makes them) and the run stores (which keep the newest).

/** An error as it crossed from the user's code (name, message, optional code and stack). */
export interface RunError {
  name: string
  message: string
  code?: string
  stack?: string
  /** A cancelled run's error (code RUN_CANCELLED) says what cancelled it. */
  cancelledBy?: CancelCause
}

export type CancelCause =
  | { kind: 'api' }
  | { kind: 'event'; eventId: string; eventName: string }
  /** A run of the same singleton key started (`singleton: { mode: "cancel" }`). */
  | { kind: 'singleton'; runId: string }

/**
 * `waiting`: paused at a sleep, a wait for an event or an invoked function (its step says for what);
 * `cancelled`: ended by POST /v1/runs/<id>/cancel or a `cancelOn` event (its error says which);
 * `skipped`: flow control started no run for its event (a rate limit, idempotency, a singleton; its error says which).
 */
export type RunStatus = 'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled' | 'skipped'
export const RUN_STATUSES: readonly RunStatus[] = [
  'queued',
  'running',
  'waiting',
  'completed',
  'failed',
  'cancelled',
  'skipped',
]

/** What a paused step waits for, or waited for once done (then with how it ended). */
export interface PauseDoc {
  kind: 'sleep' | 'event' | 'invoke'
  startedAt: number
  /** When a sleep ends, or when a wait or an invocation times out. */
  until: number
  /** A wait: the awaited event's name, and the `match` and `if` it was given. */
  event?: string
  match?: string
  if?: string
  /** An invocation: the function (`<app>-<id>`) and its run. */
  function?: string
  runId?: string
  /** Once resumed: the matching event's internal ID, or true when the wait or the invocation timed out. */
  matchedEventId?: string
  timedOut?: boolean
}

export interface StepDoc {
  id: string
  /** The name the user gave, where `id` is not it (an app's steps are named by the SDK's hashes). */
  name?: string
  /** `retrying`: its last attempt threw and a retry waits; `failed`: it failed the run; `waiting`: it pauses the run. */
  status: 'completed' | 'retrying' | 'failed' | 'waiting'
  /** Steps that pause the run (sleeps, waits, invocations): what for, and how it ended. */
  pause?: PauseDoc
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
  /** A batch run's events (batchEvents), the first of which is `eventId`. */
  eventIds?: string[]
}
