// The local log's committed offsets and the retention they drive (bus/ARCHITECTURE.md). A commit
// counts at once in memory, where consumer lag, backpressure, shared values and retention read it,
// and reaches RocksDB lazily: with the next log write, else after the commit interval, and on stop.
// A crash redelivers what was handled since: delivery is at-least-once anyway.
import type { Logger } from 'pino'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { onceEvery } from '../core/retry.ts'
import { deleteConsumed, offsetKeyParts, storedOffsets } from './local-layout.ts'

export interface Offsets {
  /** offsetKey → the next offset its group reads, as committed here (written or not). */
  readonly committed: ReadonlyMap<string, number>
  /** How many times `committed` has changed: retention passes only once it has. */
  readonly changes: number
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
  let changes = 0
  let timer: NodeJS.Timeout | undefined
  // Retried every interval and failing together while the disk is full: a warning each 10 s at most.
  const failed = onceEvery(10_000)

  function commit(key: string, next: number): void {
    committed.set(key, next)
    changes++
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

  return {
    committed,
    get changes() {
      return changes
    },
    start(key, next) {
      committed.set(key, next)
      changes++
    },
    commit,
    take,
    requeue,
    write,
  }
}

/**
 * Every `intervalMs`, deletes per partition what every group that ever committed there (stored) or
 * consumes it now (`offsets.committed`) has consumed. Often, so that most record batches are deleted
 * while still in RocksDB's memtable, never flushed or compacted. Compacted topics are kept whole: a
 * new reader (another control-plane view, a restore) must find every key. A pass costs nothing until
 * a group commits: with a runner group per function, a server serving 200 functions spent ~2.5 % of
 * a core, idle, reading every group's offsets from RocksDB ten times a second.
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
  /**
   * The offsets stored when the first pass ran. Read once: every commit since then, and every group
   * that starts, is in `offsets.committed`, which outranks them.
   */
  let stored: Map<string, number> | undefined
  /** Per offset key, its `topic\0partition`, or null on a compacted topic: worked out once. */
  const partitionOf = new Map<string, string | null>()
  /** `offsets.changes` when the last pass that succeeded began. */
  let passed = -1
  let pass: Promise<void> | undefined
  const failed = onceEvery(10_000)

  async function retain(): Promise<void> {
    stored ??= await storedOffsets(rocks)
    // Keys seen for the first time only wait on a lookup; the rest of the pass awaits nothing per key.
    for (const keys of [stored.keys(), offsets.committed.keys()])
      for (const key of keys) {
        if (partitionOf.has(key)) continue
        const [, topic, partition] = offsetKeyParts(key)
        partitionOf.set(key, (await isCompacted(topic)) ? null : `${topic}\0${partition}`)
      }
    const upTo = new Map<string, number>()
    const consumed = (key: string, next: number) => {
      const tp = partitionOf.get(key)
      if (tp) upTo.set(tp, Math.min(upTo.get(tp) ?? Number.POSITIVE_INFINITY, next))
    }
    for (const [key, next] of stored) if (!offsets.committed.has(key)) consumed(key, next)
    for (const [key, next] of offsets.committed) consumed(key, next)
    await deleteConsumed(rocks, upTo, truncated)
  }

  const timer = setInterval(() => {
    if (pass || offsets.changes === passed) return
    const changes = offsets.changes
    pass = retain()
      .then(() => {
        passed = changes
      })
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
