// Pauses of a run (step.sleep, step.sleepUntil, step.waitForEvent, step.invoke), as pure functions: the
// waiting record a pause becomes, and how it ends — at its due time (a sleep is over, a wait returns
// null, an invocation fails) or by a signal (the awaited event, the invoked run's result). The runner
// publishes and parks what these return; see ARCHITECTURE.md, "Waits".
import type { Pause } from '../core/execution.ts'
import { RESERVED_PREFIX, type EventRecord } from '../core/event.ts'
import {
  runIdFor,
  sentEventIds,
  type CompletedStep,
  type RunRecord,
  type RunSignal,
  type Waiting,
} from '../core/run-record.ts'
import type { RunError } from '../core/run-doc.ts'
import { functionEvent } from './events.ts'

/** The event step.invoke sends: it runs the invoked function only (router), with the data given. */
export const FUNCTION_INVOKED = `${RESERVED_PREFIX}function.invoked`

/** What a due or signalled waiting record leads to: a record to execute, or a step that failed. */
export type Resolution = { kind: 'execute'; record: RunRecord } | { kind: 'fail'; stepId: string; error: RunError }

/** The waiting record after `record` whose execution paused at `stepId`, and what it sends (an invocation). */
export function waitingRecord(
  record: RunRecord,
  stepId: string,
  pause: Pause,
  startedAt: number,
  settled: RunRecord,
  name?: string,
): { next: RunRecord; invoke?: EventRecord } {
  const seq = record.seq + 1
  const invoke = pause.kind === 'invoke' ? invokeEvent(record, stepId, seq, pause, startedAt) : undefined
  const waiting: Waiting = { ...waitingOf(stepId, pause, startedAt, invoke), ...(name !== undefined && { name }) }
  return { next: { ...settled, seq, attempt: 0, waiting, dueAt: waiting.until }, ...(invoke && { invoke }) }
}

/** Deterministic, so a repeated invoke is the same event (dedup drops it) and the same run. */
function invokeEvent(
  record: RunRecord,
  stepId: string,
  seq: number,
  pause: Extract<Pause, { kind: 'invoke' }>,
  nowMs: number,
): EventRecord {
  const [internalId] = sentEventIds(record.runId, `invoke\0${stepId}`, 1)
  return {
    internalId,
    id: internalId,
    name: FUNCTION_INVOKED,
    data: pause.data,
    ts: nowMs,
    env: record.env,
    receivedAt: nowMs,
    source: {
      kind: 'invoke',
      functionId: record.functionId,
      runId: record.runId,
      stepId,
      seq,
      target: pause.functionKey,
      ...(record.routeKey !== undefined && { routeKey: record.routeKey }),
    },
  }
}

function waitingOf(stepId: string, pause: Pause, startedAt: number, invoke?: EventRecord): Waiting {
  switch (pause.kind) {
    case 'sleep':
      return {
        kind: 'sleep',
        stepId,
        startedAt,
        until: 'durationMs' in pause ? startedAt + pause.durationMs : pause.untilMs,
      }
    case 'event':
      return {
        kind: 'event',
        stepId,
        startedAt,
        until: startedAt + pause.timeoutMs,
        event: pause.event,
        ...(pause.match !== undefined && { match: pause.match }),
        ...(pause.if !== undefined && { if: pause.if }),
      }
    case 'invoke':
      return {
        kind: 'invoke',
        stepId,
        startedAt,
        until: startedAt + pause.timeoutMs,
        function: pause.functionKey,
        runId: runIdFor(invoke!, pause.functionKey),
      }
    default: {
      const unknown: never = pause
      throw new Error(`unknown pause ${JSON.stringify(unknown)}`)
    }
  }
}

/** A waiting record at its due time: the pause ends without what it waited for. */
export function resolveDue(record: RunRecord, nowMs: number): Resolution {
  const waiting = record.waiting!
  if (waiting.kind === 'invoke')
    return {
      kind: 'fail',
      stepId: waiting.stepId,
      error: {
        name: 'InvokeTimeoutError',
        code: 'INVOKE_TIMEOUT',
        message: `step.invoke("${waiting.stepId}"): function "${waiting.function}" did not finish by ${new Date(waiting.until).toISOString()}`,
      },
    }
  const timedOut = waiting.kind === 'event'
  return { kind: 'execute', record: completed(record, null, nowMs, timedOut ? { timedOut } : {}) }
}

/** A waiting record ended by a signal; null when the signal is not for this pause. */
export function resolveSignal(record: RunRecord, signal: RunSignal['signal'], nowMs: number): Resolution | null {
  const waiting = record.waiting
  if (!waiting || signal.kind === 'cancel' || signal.seq !== record.seq) return null
  if (signal.kind === 'event') {
    if (waiting.kind !== 'event') return null
    const output = functionEvent(signal.event)
    return { kind: 'execute', record: completed(record, output, nowMs, { matchedEventId: signal.event.internalId }) }
  }
  if (waiting.kind !== 'invoke') return null
  if (signal.error) {
    const message = `step.invoke("${waiting.stepId}"): function "${waiting.function}" failed: ${signal.error.message}`
    return { kind: 'fail', stepId: waiting.stepId, error: { ...signal.error, message } }
  }
  return { kind: 'execute', record: completed(record, signal.output ?? null, nowMs, {}) }
}

function completed(
  record: RunRecord,
  output: unknown,
  nowMs: number,
  how: { timedOut?: boolean; matchedEventId?: string },
): RunRecord {
  const { waiting, dueAt: _, ...rest } = record
  const { stepId, name, ...pause } = waiting!
  const step: CompletedStep = {
    id: stepId,
    ...(name !== undefined && { name }),
    output,
    attempts: 1,
    endedAt: nowMs,
    pause: { ...pause, ...how },
  }
  return { ...rest, steps: [...record.steps, step] }
}
