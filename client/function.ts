// A function definition: what `client.createFunction(…)` returns and a runner serves.
// Plain data plus the handler, so a runner recognises one by its `kind` field rather than
// by `instanceof` (a user's file may load the client from another copy of the package).
import type { HandlerData } from './events.ts'
import type { SendEvents } from './send.ts'
import { parseDuration, parseTime, type Duration } from '../core/duration.ts'
import { compileExpression, parsePath } from '../core/expression.ts'
import { parseCron } from '../core/cron.ts'
import { checkFlow, type FlowControl, type FlowOptions } from './flow.ts'

import {
  DEFAULT_FUNCTION_RETRIES,
  DEFAULT_FUNCTION_TIMEOUT_MS,
  type CancelRule,
  type FunctionSpec,
} from '../core/function.ts'

export { DEFAULT_FUNCTION_RETRIES, DEFAULT_FUNCTION_TIMEOUT_MS, type CancelRule } from '../core/function.ts'

export const FUNCTION_KIND = 'sluice/function'
const MAX_RETRIES = 20
const MAX_FUNCTION_TIMEOUT_MS = 24 * 60 * 60_000

/** The triggering event as a handler sees it; `data` typed when N is a name of Events (client/events.ts). */
export interface FunctionEvent<N extends string = string> {
  /** The ID the Event API returned. */
  internalId: string
  /** The dedup key: the producer's `id`, or the internal ID when none was given. */
  id: string
  name: N
  data: HandlerData<N>
  ts: number
  env: string
  receivedAt: number
}

export type { Duration }

export interface WaitForEventOptions {
  /** The name of the event to wait for. */
  event: string
  /** How long to wait; the step then returns null. */
  timeout: Duration
  /** A field path (`"data.orderId"`): the awaited event's value must equal the triggering event's. */
  match?: string
  /** A CEL expression over `event` (the triggering event) and `async` (the awaited one). */
  if?: string
}

export interface InvokeOptions {
  /** The function to run: its definition, or its `<app id>-<function id>` key. */
  function: SluiceFunction | string
  /** The invoked run's event data. */
  data?: Record<string, unknown>
  /** How long to wait for its result before the step fails (default: a year). */
  timeout?: Duration
}

export interface StepTools {
  /** Runs `fn` once per run: a completed step's JSON result is replayed, never re-executed. */
  run<T>(id: string, fn: () => T | Promise<T>): Promise<Jsonified<T>>
  /** Sends events once per run: deterministic IDs let dedup drop any repeat. */
  sendEvent<N extends string>(id: string, events: SendEvents<N>): Promise<{ ids: string[] }>
  /** Pauses the run for `duration`, holding nothing in memory meanwhile. */
  sleep(id: string, duration: Duration): Promise<void>
  /** Pauses the run until `time` (a Date, ISO 8601 string or epoch ms); a time past continues at once. */
  sleepUntil(id: string, time: Date | string | number): Promise<void>
  /** The first matching event received after the wait began, or null at the timeout. */
  waitForEvent(id: string, options: WaitForEventOptions): Promise<FunctionEvent | null>
  /** Runs another function with `data` as its event's data and returns its result; its failure throws here. */
  invoke<T = unknown>(id: string, options: InvokeOptions): Promise<T>
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

/** One FunctionEvent per trigger name, so a check of `event.name` narrows `event.data`. */
export type TriggeredEvent<N extends string> = N extends string ? FunctionEvent<N> : never

export interface FunctionContext<N extends string = string> {
  event: TriggeredEvent<N>
  /** Every event of the run: those of its batch (`batchEvents`), else `[event]`. */
  events: TriggeredEvent<N>[]
  step: StepTools
  runId: string
  /** 0 on the first attempt of the current step; counts retries since the last completed step. */
  attempt: number
  logger: FunctionLogger
}

export type FunctionHandler<N extends string = string> = (context: FunctionContext<N>) => unknown

/** Ends a run (queued, waiting or retrying) when a matching event arrives. */
export interface CancelOn {
  event: string
  /** A field path: the cancelling event's value must equal the triggering event's. */
  match?: string
  /** A CEL expression over `event` (the triggering event) and `async` (the cancelling one). */
  if?: string
  /** How long after the run began a matching event still cancels it. */
  timeout?: Duration
}

export interface FunctionOptions extends FlowOptions {
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
  cancelOn?: CancelOn[]
}

/**
 * What starts a run: an event by name (`"shop/*"` matches every name under `shop/`), optionally
 * filtered by a CEL expression over `event`; or a cron schedule (`"0 9 * * 1-5"`, with an optional
 * `TZ=Europe/Paris ` prefix or a leading seconds field).
 */
export type FunctionTrigger<N extends string = string> = { event: N; if?: string } | { cron: string }

/** A function as `createFunction` defines it: its registration (core/function.ts) and its handler. */
export interface SluiceFunction extends FunctionSpec {
  kind: typeof FUNCTION_KIND
  handler: FunctionHandler
}

export function defineFunction(
  app: { id: string; env?: string },
  options: FunctionOptions,
  trigger: FunctionTrigger | FunctionTrigger[],
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
    triggers: checkTriggers(trigger),
    cancelOn: checkCancelOn(options.cancelOn),
    ...withFlow(checkFlow(options)),
    env: app.env ?? 'production',
    handler,
  }
}

const withFlow = (flow: FlowControl | undefined) => (flow ? { flow } : {})

const MAX_TRIGGERS = 10

function checkTriggers(given: FunctionTrigger | FunctionTrigger[]): FunctionTrigger[] {
  const list = Array.isArray(given) ? given : [given]
  if (list.length === 0 || list.length > MAX_TRIGGERS)
    throw new TypeError(`createFunction(options, triggers): from 1 to ${MAX_TRIGGERS} triggers`)
  return list.map((t, i) => {
    const where = Array.isArray(given) ? `triggers[${i}]` : 'trigger'
    const fail = (what: string, message: string) => {
      throw new TypeError(`createFunction(options, { ${where}.${what} }): ${message}`)
    }
    if (t && 'cron' in t && t.cron !== undefined) {
      const schedule = parseCron(t.cron)
      if (!schedule.ok) fail('cron', schedule.message)
      return { cron: t.cron }
    }
    const event = (t as { event?: unknown } | null)?.event
    if (typeof event !== 'string' || !EVENT_PATTERN.test(event))
      fail('event', 'must be an event name, or a prefix ending in "/*" (e.g. "shop/*")')
    const filter = (t as { if?: unknown }).if
    if (filter !== undefined) {
      const compiled = compileExpression(filter, ['event'])
      if (!compiled.ok) fail('if', compiled.message)
    }
    return { event: event as string, ...(filter !== undefined && { if: filter as string }) }
  })
}

/** A name, or a prefix ending in `/*`; `*` alone matches every event. */
const EVENT_PATTERN = /^(\*|[^*]+(\/\*)?)$/

function checkCancelOn(given: CancelOn[] | undefined): CancelRule[] {
  if (given === undefined) return []
  if (!Array.isArray(given)) throw new TypeError('createFunction({ cancelOn }): must be an array')
  return given.map((c, i) => {
    const fail = (what: string, message: string) => {
      throw new TypeError(`createFunction({ cancelOn[${i}].${what} }): ${message}`)
    }
    if (typeof c?.event !== 'string' || c.event === '' || c.event.includes('*')) fail('event', 'must be an event name')
    const rule: CancelRule = { event: c.event }
    if (c.match !== undefined) {
      const path = parsePath(c.match)
      if (!path.ok) fail('match', path.message)
      rule.match = c.match
    }
    if (c.if !== undefined) {
      const compiled = compileExpression(c.if, ['event', 'async'])
      if (!compiled.ok) fail('if', compiled.message)
      rule.if = c.if
    }
    if (c.timeout !== undefined) {
      const timeout = parseDuration(c.timeout)
      if (!timeout.ok) fail('timeout', timeout.message)
      else rule.timeoutMs = timeout.value
    }
    return rule
  })
}

/** A step's wait options, checked when the step is called (a bad one fails the run: it cannot become good). */
export function checkWaitOptions(stepId: string, options: WaitForEventOptions) {
  const fail = (what: string, message: string): never => {
    throw new TypeError(`step.waitForEvent("${stepId}", { ${what} }): ${message}`)
  }
  if (typeof options?.event !== 'string' || options.event === '') fail('event', 'must be an event name')
  const timeout = parseDuration(options.timeout)
  if (!timeout.ok) return fail('timeout', timeout.message)
  if (options.match !== undefined) {
    const path = parsePath(options.match)
    if (!path.ok) fail('match', path.message)
  }
  if (options.if !== undefined) {
    const compiled = compileExpression(options.if, ['event', 'async'])
    if (!compiled.ok) fail('if', compiled.message)
  }
  return { event: options.event, timeoutMs: timeout.value, match: options.match, if: options.if }
}

export function checkSleep(stepId: string, duration: Duration): number {
  const parsed = parseDuration(duration)
  if (!parsed.ok) throw new TypeError(`step.sleep("${stepId}", duration): ${parsed.message}`)
  return parsed.value
}

export function checkSleepUntil(stepId: string, time: unknown): number {
  const parsed = parseTime(time)
  if (!parsed.ok) throw new TypeError(`step.sleepUntil("${stepId}", time): ${parsed.message}`)
  return parsed.value
}

export function checkInvoke(stepId: string, options: InvokeOptions) {
  const fail = (what: string, message: string): never => {
    throw new TypeError(`step.invoke("${stepId}", { ${what} }): ${message}`)
  }
  const target = options?.function
  const key = isSluiceFunction(target) ? target.key : target
  if (typeof key !== 'string' || key === '') return fail('function', 'must be a function or its "<app>-<id>" key')
  const data = options.data ?? {}
  if (typeof data !== 'object' || data === null || Array.isArray(data)) fail('data', 'must be a JSON object')
  const timeout = parseDuration(options.timeout ?? MAX_INVOKE_TIMEOUT)
  if (!timeout.ok) return fail('timeout', timeout.message)
  return { functionKey: key, data, timeoutMs: timeout.value }
}

const MAX_INVOKE_TIMEOUT = '365d'

export function isSluiceFunction(value: unknown): value is SluiceFunction {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === FUNCTION_KIND &&
    typeof (value as { handler?: unknown }).handler === 'function'
  )
}
