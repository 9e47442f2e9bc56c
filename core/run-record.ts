// A run as it travels on its function's topic: every record carries the whole memoised state
// (completed steps and their JSON results), so any runner instance can continue the run from
// the record alone. See runner/ARCHITECTURE.md. Shared by the router (which writes a run's first
// record) and the runner (which continues it), so it lives here rather than in either stage.
import { createHash } from 'node:crypto'
import { seededUlids, ulidTime } from './ids.ts'
import type { EventRecord } from './event.ts'
import type { RunDoc, RunError, RunStatus, StepDoc } from './run-doc.ts'

export interface CompletedStep {
  id: string
  output: unknown
  attempts: number
  endedAt: number
}

export interface RunRecord {
  runId: string
  /** `<app id>-<function id>`. */
  functionId: string
  env: string
  event: EventRecord
  /** 0 for the record the router wrote; each successor of a record has seq + 1. */
  seq: number
  /** Attempt of the current unit of work (handed to the handler); resets after each completed step. */
  attempt: number
  /** Attempts spent over the whole run: 1, plus one per retry. */
  attempts: number
  steps: CompletedStep[]
  /** The error of the last attempt, while a retry waits. */
  failing?: { stepId?: string; error: RunError; endedAt: number }
  /** A retry: not to be executed before this time. */
  dueAt?: number
  /** Set on the record POST /v1/runs/<id>/cancel writes: it ends the run instead of executing it (runner/cancel.ts). */
  cancel?: { at: number }
  queuedAt: number
  startedAt?: number
}

/** Deterministic, so a redelivered event routes to the same run: a ULID at the event's time. */
export function runIdFor(event: Pick<EventRecord, 'internalId' | 'env'>, functionId: string): string {
  return seededUlids(
    `${ulidTime(event.internalId)},${entropy(`${event.internalId}\0${event.env}\0${functionId}`)}`,
    1,
  )[0]
}

/** Internal IDs of the events a step sends: from (run id, step id, index), so a repeat is a duplicate. */
export function sentEventIds(runId: string, stepId: string, count: number): string[] {
  return seededUlids(`${ulidTime(runId)},${entropy(`${runId}\0${stepId}`)}`, count)
}

function entropy(text: string): string {
  return createHash('sha256').update(text).digest().subarray(0, 10).toString('base64')
}

export function firstRecord(event: EventRecord, functionId: string, nowMs: number): RunRecord {
  return {
    runId: runIdFor(event, functionId),
    functionId,
    env: event.env,
    event,
    seq: 0,
    attempt: 0,
    attempts: 1,
    steps: [],
    queuedAt: nowMs,
  }
}

/** The run as the store shows it, after `record` (version: seq * 2; +1 while it executes). */
export function snapshotOf(record: RunRecord, status: RunStatus, extra: Partial<RunDoc> = {}): RunDoc {
  const steps: StepDoc[] = record.steps.map((s) => ({
    id: s.id,
    status: 'completed',
    output: s.output,
    attempts: s.attempts,
    endedAt: s.endedAt,
  }))
  if (record.failing?.stepId !== undefined)
    steps.push({
      id: record.failing.stepId,
      status: 'retrying',
      error: record.failing.error,
      attempts: record.attempt,
      endedAt: record.failing.endedAt,
    })
  return {
    runId: record.runId,
    functionId: record.functionId,
    env: record.env,
    eventId: record.event.internalId,
    eventName: record.event.name,
    status,
    attempts: record.attempts,
    steps,
    queuedAt: record.queuedAt,
    ...(record.startedAt !== undefined && { startedAt: record.startedAt }),
    ...(record.failing && { error: record.failing.error }),
    ...(record.dueAt !== undefined && status === 'running' && { nextAttemptAt: record.dueAt }),
    version: record.seq * 2,
    ...extra,
  }
}
