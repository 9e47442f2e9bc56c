// One execution of a run, as a value: what an executor is given (the run's event, attempt and memoised
// steps) and what it reports (a step, the handler's result, an error, a pause). The in-process executor
// (client/step.ts, replaying a handler) and an app called over HTTP (sdk/) report the same values, which
// runner/outcome.ts turns into the run's next record.

/** The triggering event as a handler sees it (client/function.ts `FunctionEvent`, untyped). */
export interface ExecutionEvent {
  /** The ID the Event API returned. */
  internalId: string
  /** The dedup key: the producer's `id`, or the internal ID when none was given. */
  id: string
  name: string
  data: Record<string, any>
  ts: number
  env: string
  receivedAt: number
}

/** An event a step sends (client/send.ts `SendEvent`, untyped). */
export interface SentEvent {
  name: string
  data: Record<string, unknown>
  id?: string
  ts?: number
}

export interface ExecutionLogger {
  debug(...args: any[]): void
  info(...args: any[]): void
  warn(...args: any[]): void
  error(...args: any[]): void
}

/** Thrown inside a function to fail the run at once, with no retry. Recognised by its code, never instanceof. */
export class NonRetriableError extends Error {
  readonly code = 'NON_RETRIABLE'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'NonRetriableError'
  }
}

export interface SerializedError {
  name: string
  message: string
  code?: string
  stack?: string
  /** What an app's SDK attached to a step's error (Go: the step's zero value), memoised with it. */
  data?: unknown
}

export interface MemoisedStep {
  id: string
  output: unknown
  /** A step an app reported failed for good (Inngest's StepFailed): its memo is the error. */
  error?: SerializedError
  /** A step that paused the run: a sleep, a wait for an event, an invocation. */
  pause?: { kind: 'sleep' | 'event' | 'invoke' }
}

export type Execution =
  /** A new step completed: checkpoint it, then execute again. */
  | {
      kind: 'step'
      stepId: string
      output: unknown
      durationMs: number
      /** The name the user gave, where `stepId` is not it (an app's steps are named by hashes). */
      name?: string
      /** An app's step that failed for good: memoised as its error, which the app's code may catch. */
      error?: SerializedError
    }
  /** The handler returned: the run is done. */
  | { kind: 'completed'; output: unknown }
  /** A step or the handler threw. `nonRetriable`: NonRetriableError (or a result that can never be JSON). */
  | {
      kind: 'error'
      stepId?: string
      error: SerializedError
      nonRetriable: boolean
      /** The step's name, as for `step`; and when the app asked to be retried (`Retry-After`). */
      name?: string
      retryAt?: number
    }
  /** The run pauses at a new step until something resumes it (runner/ARCHITECTURE.md, "Waits"). */
  | { kind: 'pause'; stepId: string; pause: Pause; name?: string }

/** What a paused step waits for. Durations are relative to when the runner checkpoints the pause. */
export type Pause =
  | { kind: 'sleep'; durationMs: number }
  | { kind: 'sleep'; untilMs: number }
  | { kind: 'event'; event: string; timeoutMs: number; match?: string; if?: string }
  | { kind: 'invoke'; functionKey: string; data: Record<string, unknown>; timeoutMs: number }

export interface ExecutionInput {
  event: ExecutionEvent
  events: ExecutionEvent[]
  runId: string
  attempt: number
  steps: readonly MemoisedStep[]
  logger: ExecutionLogger
  /** Publishes a `step.sendEvent` step's events; resolves with their internal IDs once durable. */
  sendEvents(stepId: string, events: SentEvent[]): Promise<string[]>
}
