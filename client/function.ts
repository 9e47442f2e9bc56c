// A function definition: what `client.createFunction(…)` returns and a runner serves.
// Plain data plus the handler, so a runner recognises one by its `kind` field rather than
// by `instanceof` (a user's file may load the client from another copy of the package).
import type { SendEvent } from './send.ts'

export const FUNCTION_KIND = 'sluice/function'
export const DEFAULT_FUNCTION_RETRIES = 3
const MAX_RETRIES = 20
export const DEFAULT_FUNCTION_TIMEOUT_MS = 5 * 60_000
const MAX_FUNCTION_TIMEOUT_MS = 24 * 60 * 60_000

/** The triggering event as a handler sees it. */
export interface FunctionEvent {
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

export interface StepTools {
  /** Runs `fn` once per run: a completed step's JSON result is replayed, never re-executed. */
  run<T>(id: string, fn: () => T | Promise<T>): Promise<Jsonified<T>>
  /** Sends events once per run: deterministic IDs let dedup drop any repeat. */
  sendEvent(id: string, events: SendEvent | SendEvent[]): Promise<{ ids: string[] }>
}

/** What survives a JSON round trip: memoised step results are JSON. */
export type Jsonified<T> = T extends undefined | void
  ? null
  : T extends (...args: never[]) => unknown
    ? never
    : T extends object
      ? { [K in keyof T]: Jsonified<T[K]> }
      : T

export interface FunctionLogger {
  debug(...args: any[]): void
  info(...args: any[]): void
  warn(...args: any[]): void
  error(...args: any[]): void
}

export interface FunctionContext {
  event: FunctionEvent
  step: StepTools
  runId: string
  /** 0 on the first attempt of the current step; counts retries since the last completed step. */
  attempt: number
  logger: FunctionLogger
}

export type FunctionHandler = (context: FunctionContext) => unknown

export interface FunctionOptions {
  id: string
  name?: string
  /** Retries after the first attempt (default 3: four attempts), with exponential backoff and jitter. */
  retries?: number
  /**
   * How long one execution may take (a new step, or the handler's own code between steps) before
   * the attempt fails with code FUNCTION_TIMEOUT and is retried like any failure. Default 5 minutes.
   * The timed-out code is not stopped (JavaScript cannot be), only no longer waited for.
   */
  timeoutMs?: number
}

export interface FunctionTrigger {
  event: string
}

export interface SluiceFunction {
  kind: typeof FUNCTION_KIND
  appId: string
  id: string
  /** `<app id>-<function id>`: what the registry, topics and runs are named by. */
  key: string
  name: string
  retries: number
  timeoutMs: number
  trigger: FunctionTrigger
  /** The environment the function is served in: the client's branch env, or production. */
  env: string
  handler: FunctionHandler
}

export function defineFunction(
  app: { id: string; env?: string },
  options: FunctionOptions,
  trigger: FunctionTrigger,
  handler: FunctionHandler,
): SluiceFunction {
  if (!options || typeof options.id !== 'string' || options.id === '')
    throw new TypeError('createFunction({ id }): id must be a non-empty string')
  if (options.name !== undefined && typeof options.name !== 'string')
    throw new TypeError('createFunction({ name }): name must be a string')
  const retries = options.retries ?? DEFAULT_FUNCTION_RETRIES
  if (!Number.isInteger(retries) || retries < 0 || retries > MAX_RETRIES)
    throw new TypeError(`createFunction({ retries }): retries must be an integer from 0 to ${MAX_RETRIES}`)
  const timeoutMs = options.timeoutMs ?? DEFAULT_FUNCTION_TIMEOUT_MS
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_FUNCTION_TIMEOUT_MS)
    throw new TypeError(
      `createFunction({ timeoutMs }): timeoutMs must be an integer from 1 to ${MAX_FUNCTION_TIMEOUT_MS}`,
    )
  if (!trigger || typeof trigger.event !== 'string' || trigger.event === '')
    throw new TypeError('createFunction(options, { event }): event must be a non-empty event name')
  if (typeof handler !== 'function')
    throw new TypeError('createFunction(options, trigger, handler): handler must be a function')
  return {
    kind: FUNCTION_KIND,
    appId: app.id,
    id: options.id,
    key: `${app.id}-${options.id}`,
    name: options.name ?? options.id,
    retries,
    timeoutMs,
    trigger: { event: trigger.event },
    env: app.env ?? 'production',
    handler,
  }
}

export function isSluiceFunction(value: unknown): value is SluiceFunction {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === FUNCTION_KIND &&
    typeof (value as { handler?: unknown }).handler === 'function'
  )
}
