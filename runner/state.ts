import type { RunRecord } from '../core/run-record.ts'

export interface ProcessedMark {
  runId: string
  seq: number
}

/**
 * A runner's durable state for the runs of its input partitions: which record of each run was
 * already processed (the fence that drops duplicate records), and the retries parked until
 * their due time. In embedded mode it lives in the shared RocksDB; a distributed adapter keeps
 * it per partition and restores it when a partition moves, as dedup does.
 */
export interface RunnerState {
  /** Per run ID: the highest seq already processed, or -1. */
  processed(runIds: string[]): Promise<number[]>
  /** One atomic write: marks records as processed and parks retries that are not due yet. */
  save(update: { processed: ProcessedMark[]; parked: RunRecord[] }): Promise<void>
  /** Parked records due at or before `nowMs`, earliest first. */
  due(nowMs: number, limit: number): Promise<RunRecord[]>
  /** When the earliest parked record is due, or null when none is parked. */
  nextDueAt(): Promise<number | null>
  /** Forgets parked records once they have been re-published. */
  unpark(records: RunRecord[]): Promise<void>
  /** Forgets the marks of runs whose events are older than `beforeMs` (run IDs carry that time). */
  expire(beforeMs: number): Promise<void>
  close(): Promise<void>
}
