// Events in and out of a run: the triggering event as handlers see it, the events a step
// sends (deterministic IDs, validated like the Event API), and `sluice/function.failed`.
import {
  RESERVED_PREFIX,
  toEventRecords,
  validateEventBody,
  type EventInput,
  type EventLimits,
  type EventRecord,
} from '../core/event.ts'
import { NonRetriableError, type ExecutionEvent, type SentEvent } from '../core/execution.ts'
import type { RunDoc } from '../core/run-doc.ts'
import { sentEventIds, type RunRecord } from '../core/run-record.ts'
import { withViolations, type SchemaOutcome } from '../control/schema-check.ts'

/** The environment's schema modes applied to events a step sends (control/schema-check.ts). */
export type CheckSent = (env: string, events: readonly EventInput[], where: (i: number) => string) => SchemaOutcome

export type SendLimits = Pick<EventLimits, 'maxEvents' | 'maxJsonDepth' | 'maxNameLength' | 'maxIdLength'>

export const FUNCTION_FAILED = `${RESERVED_PREFIX}function.failed`
/** Sent when any run ends, completed or failed, where a function of its environment listens (apps on Inngest's SDKs). */
export const FUNCTION_FINISHED = `${RESERVED_PREFIX}function.finished`

export function functionEvent(e: EventRecord): ExecutionEvent {
  return {
    internalId: e.internalId,
    id: e.id,
    name: e.name,
    data: e.data,
    ts: e.ts,
    env: e.env,
    receivedAt: e.receivedAt,
  }
}

/** A bad event never becomes valid on retry: the step fails the run at once. */
export function sentEvents(
  record: RunRecord,
  stepId: string,
  events: SentEvent[],
  limits: SendLimits,
  nowMs: number,
  check?: CheckSent,
): EventRecord[] {
  const where = `step.sendEvent("${stepId}")`
  // The Event API's own checks, so a sent event is valid exactly when a posted one would be.
  const validation = validateEventBody(events, limits)
  if (!validation.ok) throw new NonRetriableError(`${where}: ${validation.message}`)
  // The same check and message as the Event API's, so a blocked send fails its step at once.
  const checked = check?.(record.env, validation.events, (i) => `events[${i}]`)
  if (checked?.kind === 'refused') throw new NonRetriableError(`${where}: ${checked.message}`)
  const internalIds = sentEventIds(record.runId, stepId, events.length)
  const records = toEventRecords(validation.events, {
    internalIds,
    env: record.env,
    receivedAt: nowMs,
    source: { kind: 'function', functionId: record.functionId, runId: record.runId, stepId },
  })
  if (checked?.violations) withViolations(records, checked.violations)
  return records
}

/** The notice of a finally failed run; none for runs of a failure handler, so failures cannot loop. */
export function failedEvent(record: RunRecord, run: RunDoc): EventRecord | undefined {
  if (record.event.name === FUNCTION_FAILED) return undefined
  const [id] = sentEventIds(record.runId, FUNCTION_FAILED, 1)
  const e = record.event
  const { stack: _, ...error } = run.error ?? { name: 'Error', message: 'unknown error' }
  return {
    internalId: id,
    id,
    name: FUNCTION_FAILED,
    data: {
      function_id: record.functionId,
      run_id: record.runId,
      attempts: run.attempts,
      error,
      event: { internal_id: e.internalId, id: e.id, name: e.name, data: e.data, ts: e.ts },
    },
    ts: run.endedAt ?? Date.now(),
    env: record.env,
    receivedAt: run.endedAt ?? Date.now(),
    source: { kind: 'function', functionId: record.functionId, runId: record.runId, stepId: FUNCTION_FAILED },
  }
}

/** The notice that a run ended (Inngest's inngest/function.finished); none for runs it started. */
export function finishedEvent(record: RunRecord, run: RunDoc): EventRecord | undefined {
  if (record.event.name === FUNCTION_FINISHED) return undefined
  const [id] = sentEventIds(record.runId, FUNCTION_FINISHED, 1)
  const e = record.event
  const ended = run.endedAt ?? Date.now()
  const { stack: _, ...error } = run.error ?? { name: 'Error', message: 'unknown error' }
  return {
    internalId: id,
    id,
    name: FUNCTION_FINISHED,
    data: {
      function_id: record.functionId,
      run_id: record.runId,
      ...(run.status === 'completed' ? { result: run.output ?? null } : { error }),
      event: { internal_id: e.internalId, id: e.id, name: e.name, data: e.data, ts: e.ts },
    },
    ts: ended,
    env: record.env,
    receivedAt: ended,
    source: { kind: 'function', functionId: record.functionId, runId: record.runId, stepId: FUNCTION_FINISHED },
  }
}
