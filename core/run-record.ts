// A run as it travels on its function's topic: every record carries the whole memoised state
// (completed steps and their JSON results), so any runner instance can continue the run from
// the record alone. See runner/ARCHITECTURE.md. Shared by the router (which writes a run's first
// record) and the runner (which continues it), so it lives here rather than in either stage.
import { createHash } from 'node:crypto'
import { seededUlids, ulidTime } from './ids.ts'
import type { EventRecord } from './event.ts'
import type { FlowKeys } from './flow-keys.ts'
import type { CancelCause, PauseDoc, RunDoc, RunError, RunStatus, StepDoc } from './run-doc.ts'

export interface CompletedStep {
  id: string
  /** The name the user gave, where `id` is not it (an app's steps are named by the SDK's hashes). */
  name?: string
  output: unknown
  /** A step an app reported failed for good: memoised as this error, which the code after it may catch. */
  error?: RunError
  attempts: number
  endedAt: number
  /** A step that paused the run: what it waited for and how that ended. */
  pause?: PauseDoc
}

/**
 * What a waiting record (parked until `dueAt`) waits for. Reaching `dueAt` ends the pause: a sleep
 * is over, a wait returns null, an invocation fails. A signal (RunSignal) may end it sooner.
 */
export type Waiting = PauseDoc & { stepId: string; name?: string }

/** The run that invoked this one (step.invoke), told when this run ends. */
export interface InvokedBy {
  runId: string
  /** The caller's `<app>-<id>` and environment: where its records go. */
  functionKey: string
  env: string
  /** The caller's waiting record. */
  seq: number
  stepId: string
  /** The caller's route key (flow control), so the signal reaches the partition that holds it. */
  routeKey?: string
}

/** A message to a run on its function's topic, keyed like the run's records (its route key, else its ID). */
export interface RunSignal {
  runId: string
  routeKey?: string
  signal: /** Ends the waiting record `seq` with the awaited event. */
    | { kind: 'event'; seq: number; event: EventRecord }
    /** Ends the waiting record `seq` with the invoked run's result. */
    | { kind: 'invoked'; seq: number; output?: unknown; error?: RunError }
    /** Ends the run, whatever it is doing: the step in flight finishes, nothing after it runs. */
    | { kind: 'cancel'; at: number; cause: CancelCause }
}

/** What a function's topic carries. */
export type FunctionRecord = RunRecord | RunSignal

export const isSignal = (record: FunctionRecord): record is RunSignal => 'signal' in record

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
  failing?: { stepId?: string; name?: string; error: RunError; endedAt: number }
  /** A retry or a pause: not to be executed before this time. */
  dueAt?: number
  /** Set on a record that pauses the run until `dueAt`, unless a signal ends the pause first. */
  waiting?: Waiting
  invokedBy?: InvokedBy
  /** What the function's topic keys the run's records by (its flow-control key): one owner sees all runs of it. */
  routeKey?: string
  /** A batch run's events (`batchEvents`); `event` is the first. */
  events?: EventRecord[]
  /** Flow control: where the record waits for admission, and the run's keys (core/flow-keys.ts). */
  queue?: { key: string; order: number }
  flow?: FlowKeys
  /** Held while its function was paused and published again on resume: not held again. */
  released?: true
  /** A debounced run's record, parked until its quiet period ends; a batch's timer. */
  gather?: { kind: 'debounce' | 'batch'; key: string }
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
    ...(s.name !== undefined && { name: s.name }),
    status: 'completed',
    output: s.output,
    ...(s.error !== undefined && { error: s.error }),
    attempts: s.attempts,
    endedAt: s.endedAt,
    ...(s.pause && { pause: s.pause }),
  }))
  if (record.failing?.stepId !== undefined)
    steps.push({
      id: record.failing.stepId,
      ...(record.failing.name !== undefined && { name: record.failing.name }),
      status: 'retrying',
      error: record.failing.error,
      attempts: record.attempt,
      endedAt: record.failing.endedAt,
    })
  if (record.waiting) {
    const { stepId, name, ...pause } = record.waiting
    steps.push({
      id: stepId,
      ...(name !== undefined && { name }),
      status: 'waiting',
      pause,
      attempts: record.attempt + 1,
      endedAt: pause.startedAt,
    })
  }
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
    ...(record.dueAt !== undefined && status === 'running' && !record.waiting && { nextAttemptAt: record.dueAt }),
    version: record.seq * 2,
    ...(record.events && { eventIds: record.events.map((e) => e.internalId) }),
    ...extra,
  }
}
