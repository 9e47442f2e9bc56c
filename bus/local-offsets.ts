// The local log's committed offsets and the retention they drive (bus/ARCHITECTURE.md). A commit
// counts at once in memory, where consumer lag, backpressure, shared values and retention read it,
// and reaches RocksDB lazily: with the next log write, else after the commit interval, and on stop.
// A crash redelivers what was handled since: delivery is at-least-once anyway.
import type { Logger } from 'pino'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { onceEvery } from '../core/retry.ts'
import { truncate } from './local-layout.ts'

export interface Offsets {
  /** offsetKey → the next offset its group reads, as committed here (written or not). */
  readonly committed: ReadonlyMap<string, number>
  /** Where a group starts, as RocksDB has it: nothing to write. */
  start(key: string, next: number): void
  commit(key: string, next: number): void
  /** The offsets not yet written, as write ops: a log write carries them (the flush). */
  take(): WriteOp[]
  /** Puts back the offsets of a failed write, unless the group committed again since. */
  requeue(ops: WriteOp[]): void
  write(): Promise<void>
}

export function createOffsets(rocks: Rocks, log: Logger, commitIntervalMs: number): Offsets {
  const committed = new Map<string, number>()
  const unwritten = new Map<string, number>()
  let timer: NodeJS.Timeout | undefined
  // Retried every interval and failing together while the disk is full: a warning each 10 s at most.
  const failed = onceEvery(10_000)

  function commit(key: string, next: number): void {
    committed.set(key, next)
    unwritten.set(key, next)
    if (timer) return
    timer = setTimeout(
      () =>
        void write().catch((err) => failed((skipped) => log.warn({ err, skipped }, 'offset commit failed; retrying'))),
      commitIntervalMs,
    )
    timer.unref()
  }

  function take(): WriteOp[] {
    clearTimeout(timer)
    timer = undefined
    const ops: WriteOp[] = [...unwritten].map(([key, next]) => ({ type: 'put', key, value: String(next) }))
    unwritten.clear()
    return ops
  }

  function requeue(ops: WriteOp[]): void {
    for (const op of ops) if (op.type === 'put' && !unwritten.has(op.key)) commit(op.key, Number(op.value))
  }

  async function write(): Promise<void> {
    const ops = take()
    try {
      await rocks.write(ops)
    } catch (err) {
      requeue(ops)
      throw err
    }
  }

  return { committed, start: (key, next) => void committed.set(key, next), commit, take, requeue, write }
}

/**
 * Every `intervalMs`, deletes what every group has consumed (local-layout.ts, `truncate`). Often, so
 * that most record batches are deleted while still in RocksDB's memtable, never flushed or compacted.
 */
export function startRetention(
  rocks: Rocks,
  log: Logger,
  offsets: Offsets,
  isCompacted: (topic: string) => Promise<boolean>,
  intervalMs: number,
): { stop(): Promise<void> } {
  /** Per `topic\0partition`, the offset below which the log is deleted: each pass deletes only what is new. */
  const truncated = new Map<string, number>()
  let pass: Promise<void> | undefined
  const failed = onceEvery(10_000)
  const timer = setInterval(() => {
    pass ??= truncate(rocks, offsets.committed, truncated, isCompacted)
      .catch((err) => failed((skipped) => log.warn({ err, skipped }, 'log retention failed')))
      .finally(() => {
        pass = undefined
      })
  }, intervalMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await pass
    },
  }
}
