import type { RunRecord } from '../core/run-record.ts'
import type { CancelCause } from '../core/run-doc.ts'

/**
 * How far a run has been processed: the highest seq (the fence that drops duplicate records), and
 * whether the run ended (signals are then dropped) or a cancel waits for its next record.
 */
export interface RunMark {
  seq: number
  state: 'open' | 'ended' | 'cancelling'
  /** What the pending cancel (`cancelling`) came from. */
  cause?: CancelCause
}

export const NO_MARK: RunMark = { seq: -1, state: 'open' }

export interface StateUpdate {
  marks: Array<{ runId: string; mark: RunMark }>
  /** Records to hold until their due time (retries and pauses). */
  parked: RunRecord[]
  /** Parked records that were resumed or cancelled before their due time. */
  unparked: RunRecord[]
  /** Cron schedules whose tick ran: the schedule as written → the scheduled time. */
  cronTicks?: Array<{ cron: string; atMs: number }>
  /** Records to run once flow control admits them (their `queue` says where), and those taken out. */
  queued?: RunRecord[]
  dequeued?: RunRecord[]
  /** Flow-control state by key (rate limits, batches, debounces, …); null deletes. */
  flow?: Array<{ key: string; value: string | null }>
}

/**
 * A runner's durable state for the runs of its input partitions: the marks, the records parked until
 * their due time (at most one per run), and the last cron tick of each schedule. In embedded mode it
 * lives in the shared RocksDB; a distributed adapter keeps it per partition and restores it when a
 * partition moves, as dedup does.
 */
export interface RunnerState {
  /** Per run ID: its mark, or NO_MARK. */
  processed(runIds: string[]): Promise<RunMark[]>
  /** One atomic write of marks, parked and unparked records, and cron ticks. */
  save(update: StateUpdate): Promise<void>
  /** The record of `runId` parked now, if any. */
  parkedOf(runId: string): Promise<RunRecord | null>
  /** Parked records due at or before `nowMs`, earliest first. */
  due(nowMs: number, limit: number): Promise<RunRecord[]>
  /** When the earliest parked record is due, or null when none is parked. */
  nextDueAt(): Promise<number | null>
  /** Forgets parked records once they have been re-published. */
  unpark(records: RunRecord[]): Promise<void>
  /** The scheduled time of the last tick run of schedule `cron`, or null. */
  lastCronTick(cron: string): Promise<number | null>
  /** Flow-control state by key, null when absent. */
  flowGet(keys: string[]): Promise<Array<string | null>>
  /** The queued records of one queue key, in order, at most `limit` (those after `after`, when given). */
  queueHead(queueKey: string, limit: number, after?: RunRecord): Promise<RunRecord[]>
  /** Per queue key: how many records wait, and the first one's order (rebuilding a scheduler). */
  queueIndex(): Promise<Map<string, { count: number; first: number }>>
  /** The record of `runId` queued now, if any. */
  queuedOf(runId: string): Promise<RunRecord | null>
  /** Forgets the marks of runs whose events are older than `beforeMs` (run IDs carry that time). */
  expire(beforeMs: number): Promise<void>
  /** Keeps long-parked records durable where a log's retention would drop them (a changelog); else nothing. */
  refresh(nowMs: number): Promise<void>
  close(): Promise<void>
}

/** A mark as stored: `<seq>`, `<seq>e` (ended) or `<seq>c<cause JSON>` (cancelling). */
export function encodeMark(mark: RunMark): string {
  if (mark.state === 'ended') return `${mark.seq}e`
  if (mark.state === 'cancelling') return `${mark.seq}c${JSON.stringify(mark.cause ?? { kind: 'api' })}`
  return String(mark.seq)
}

export function decodeMark(text: string): RunMark {
  const match = /^(-?\d+)(e|c)?(.*)$/s.exec(text)
  if (!match) return NO_MARK
  const seq = Number(match[1])
  if (match[2] === 'e') return { seq, state: 'ended' }
  if (match[2] === 'c') return { seq, state: 'cancelling', cause: JSON.parse(match[3]) as CancelCause }
  return { seq, state: 'open' }
}
