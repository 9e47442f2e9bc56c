// Executes a function handler once, up to its first step that is not memoised yet.
//
// A run is replayed from the start on every record of the run: completed steps return their
// memoised JSON result at once, and the first new step runs; as soon as it settles the
// execution reports it and ends. Every later `step.*` call (and the handler's own promise,
// which awaits the new step) is left pending forever and garbage-collected, so a user's
// try/catch around a step can never swallow the interruption. The runner checkpoints the
// reported step as a new record of the run and the next execution continues from there.
import type { Execution, ExecutionInput, Pause, SerializedError } from '../core/execution.ts'
import {
  checkInvoke,
  checkSleep,
  checkSleepUntil,
  checkWaitOptions,
  type SluiceFunction,
  type StepTools,
} from './function.ts'

/**
 * A promise that never settles. A fresh one per call: a shared one would hold every awaiting
 * continuation (and its closure) forever; a fresh one is collected with the execution.
 */
const never = () => new Promise<never>(() => {})

export function executeFunction(fn: SluiceFunction, input: ExecutionInput): Promise<Execution> {
  const memo = new Map(input.steps.map((s) => [s.id, s.output]))
  const seenIds = new Map<string, number>()
  let stepInFlight: string | undefined
  let settle!: (execution: Execution) => void
  const done = new Promise<Execution>((resolve) => {
    settle = resolve
  })
  // Whatever settles first wins: a step, the handler, or the deadline.
  const deadline = setTimeout(
    () =>
      settle({
        kind: 'error',
        stepId: stepInFlight,
        error: {
          name: 'TimeoutError',
          code: 'FUNCTION_TIMEOUT',
          message: `${stepInFlight ? `step "${stepInFlight}"` : 'the handler'} ran over the function's timeoutMs (${fn.timeoutMs} ms)`,
        },
        nonRetriable: false,
      }),
    fn.timeoutMs,
  )
  done.then(() => clearTimeout(deadline))

  /** A step ID used twice in one run gets a suffix, so both calls keep their own results. */
  function uniqueId(id: string): string {
    if (typeof id !== 'string' || id === '') throw new TypeError('step id must be a non-empty string')
    const count = seenIds.get(id) ?? 0
    seenIds.set(id, count + 1)
    return count === 0 ? id : `${id}:${count}`
  }

  function step<T>(rawId: string, body: () => T | Promise<T>): Promise<any> {
    const id = uniqueId(rawId)
    if (memo.has(id)) return Promise.resolve(structuredClone(memo.get(id)))
    // Only one new step per execution: parallel steps are taken one per record, in call order.
    if (stepInFlight) return never()
    stepInFlight = id
    const startedAt = performance.now()
    Promise.resolve()
      .then(body)
      .then(
        (value) => {
          const json = toJson(value)
          settle(
            json.ok
              ? { kind: 'step', stepId: id, output: json.value, durationMs: Math.round(performance.now() - startedAt) }
              : { kind: 'error', stepId: id, error: json.error, nonRetriable: true },
          )
        },
        (err: unknown) =>
          settle({ kind: 'error', stepId: id, error: serializeError(err), nonRetriable: isNonRetriable(err) }),
      )
    return never()
  }

  /** A step that pauses the run: memoised once resumed; otherwise the execution ends with what it waits for. */
  function pause(rawId: string, describe: (id: string) => Pause | null): Promise<any> {
    const id = uniqueId(rawId)
    if (memo.has(id)) return Promise.resolve(structuredClone(memo.get(id)))
    if (stepInFlight) return never()
    stepInFlight = id
    let paused: Pause | null
    try {
      paused = describe(id)
    } catch (err) {
      // A bad duration or expression never becomes good on retry.
      settle({ kind: 'error', stepId: id, error: serializeError(err), nonRetriable: true })
      return never()
    }
    // A sleep that is already over is a step that completed at once.
    settle(
      paused ? { kind: 'pause', stepId: id, pause: paused } : { kind: 'step', stepId: id, output: null, durationMs: 0 },
    )
    return never()
  }

  const tools: StepTools = {
    run: (id, body) => step(id, body),
    sendEvent: (id, events) =>
      step(id, async () => ({ ids: await input.sendEvents(id, Array.isArray(events) ? events : [events]) })),
    sleep: (id, duration) =>
      pause(id, (stepId) => {
        const ms = checkSleep(stepId, duration)
        return ms === 0 ? null : { kind: 'sleep', durationMs: ms }
      }),
    sleepUntil: (id, time) =>
      pause(id, (stepId) => {
        const untilMs = checkSleepUntil(stepId, time)
        return untilMs <= Date.now() ? null : { kind: 'sleep', untilMs }
      }),
    waitForEvent: (id, options) =>
      pause(id, (stepId) => ({ kind: 'event', ...withoutUndefined(checkWaitOptions(stepId, options)) })),
    invoke: (id, options) => pause(id, (stepId) => ({ kind: 'invoke', ...checkInvoke(stepId, options) })),
  }

  Promise.resolve()
    .then(() =>
      fn.handler({
        event: input.event,
        events: input.events,
        step: tools,
        runId: input.runId,
        attempt: input.attempt,
        logger: input.logger,
      }),
    )
    .then(
      (value) => {
        // A handler that returns without awaiting a step it started: the step's outcome decides.
        if (stepInFlight) return
        const json = toJson(value)
        settle(
          json.ok
            ? { kind: 'completed', output: json.value }
            : { kind: 'error', error: json.error, nonRetriable: true },
        )
      },
      (err: unknown) => {
        if (!stepInFlight) settle({ kind: 'error', error: serializeError(err), nonRetriable: isNonRetriable(err) })
      },
    )
  return done
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}

/** By code, never instanceof: the user's file may load its own copy of the client. */
export function isNonRetriable(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'NON_RETRIABLE'
}

export function serializeError(err: unknown): SerializedError {
  if (err instanceof Error || (typeof err === 'object' && err !== null && 'message' in err)) {
    const e = err as { name?: unknown; message?: unknown; code?: unknown; stack?: unknown }
    return {
      name: typeof e.name === 'string' ? e.name : 'Error',
      message: String(e.message),
      ...(typeof e.code === 'string' && { code: e.code }),
      ...(typeof e.stack === 'string' && { stack: e.stack }),
    }
  }
  return { name: 'Error', message: typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err)) }
}

type JsonResult = { ok: true; value: unknown } | { ok: false; error: SerializedError }

function toJson(value: unknown): JsonResult {
  if (value === undefined) return { ok: true, value: null }
  try {
    const text = JSON.stringify(value)
    return { ok: true, value: text === undefined ? null : JSON.parse(text) }
  } catch (err) {
    return {
      ok: false,
      error: { name: 'TypeError', message: `the result is not JSON-serialisable: ${(err as Error).message}` },
    }
  }
}
