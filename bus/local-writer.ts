// The local log's write side: group commit (bus/ARCHITECTURE.md). What the publishes of one
// event-loop tick send to a partition becomes one record batch, and one RocksDB write takes every
// batch of the tick with the offsets waiting to be written. One write at a time, its WAL sync
// included: what is published meanwhile gathers into the next. So writes become readable, and
// resolve their publishers, in the order they were made: a batch is never read before an earlier
// one, so a consumer never steps over a batch that is not readable yet.
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { SluiceError } from '../core/errors.ts'
import { secondsSince } from '../core/metrics.ts'
import { sleep } from '../core/retry.ts'
import type { TopicSpec } from './types.ts'
import { partitionOf } from './partition.ts'
import { encodeBatch, sharedOf, type BatchPart, type LocalRecord } from './record-batch.ts'
import { logKey } from './local-layout.ts'
import { append, type PartitionState, type TailEntry } from './local-tail.ts'
import type { Offsets } from './local-offsets.ts'
import { publishMetrics } from './metrics.ts'

export interface TopicState {
  name: string
  spec: TopicSpec
  partitions: PartitionState[]
}

/**
 * What one write takes: per partition, its first offset and the publishes since, kept as published;
 * and the writes of other key spaces made in the same tick (`commit`: the one-pass event path's).
 */
interface Pending {
  batches: Map<PartitionState, { first: number; parts: BatchPart[]; count: number }>
  ops: WriteOp[]
  resolve: () => void
  reject: (e: unknown) => void
  promise: Promise<void>
  startedNs: bigint
  records: number
}

const published = publishMetrics('local')

export function createWriter(rocks: Rocks, offsets: Offsets, tailBytes: number) {
  let pending: Pending | null = null
  /**
   * A write is under way. Up to four at once, as writes were, each held a thread of libuv's pool
   * of 4 while RocksDB took them one after the other anyway, and the dedup lookups and WAL syncs
   * queued behind them: one at a time, 50- and 500-event batches went ~10 % faster at the same CPU
   * per event, single events the same (docs/operations.md, "One write at a time").
   */
  let writing = false
  let flushScheduled = false
  // The error of the last write, until a write succeeds: the log's write health, which readiness follows.
  let failure: unknown

  /** Resolves once the records are durable, and readable by every consumer. */
  function publish(state: TopicState, records: LocalRecord[]): Promise<void> {
    const { spec, name } = state
    const wrong = records.find((r) => r.partition !== undefined && !(r.partition >= 0 && r.partition < spec.partitions))
    if (wrong) return Promise.reject(new Error(`topic ${name} has no partition ${wrong.partition}`))
    const group = pendingWrite()
    group.records += records.length
    const { batches } = group
    const atMs = Date.now()
    const add = (p: PartitionState, part: LocalRecord[]) => {
      if (part.length === 0) return
      const batch = batches.get(p) ?? batches.set(p, { first: p.head, parts: [], count: 0 }).get(p)!
      batch.parts.push({ records: part, atMs })
      batch.count += part.length
      p.head += part.length
    }
    if (spec.partitions === 1) {
      add(state.partitions[0], records) // kept as it is: a publisher never changes what it published
    } else {
      const byPartition = new Map<number, LocalRecord[]>()
      for (const record of records) {
        const partition = record.partition ?? partitionOf(record.key, spec.partitions)
        const part = byPartition.get(partition)
        if (part) part.push(record)
        else byPartition.set(partition, [record])
      }
      for (const [partition, part] of byPartition) add(state.partitions[partition], part)
    }
    return group.promise
  }

  /** The write this tick's publishes join: what is published before the flush is written with them, atomically. */
  function pendingWrite(): Pending {
    if (pending) return pending
    pending = {
      batches: new Map(),
      ops: [],
      ...Promise.withResolvers<void>(),
      startedNs: process.hrtime.bigint(),
      records: 0,
    }
    scheduleFlush()
    return pending
  }

  /** Writes `ops` in the same RocksDB write as the records published in this tick; resolves as `publish`. */
  function commit(ops: WriteOp[]): Promise<void> {
    const group = pendingWrite()
    for (const op of ops) group.ops.push(op)
    return group.promise
  }

  function scheduleFlush(): void {
    if (!pending || flushScheduled || writing) return
    flushScheduled = true
    setImmediate(flush)
  }

  /**
   * Starts the write of what is pending now, not at the end of the tick, unless one is under way: for a
   * caller whose publishes of the tick are all made (the one pass), whose answers then leave a turn
   * of the event loop sooner. What is published after it goes in the next write.
   */
  function writeNow(): void {
    void flush()
  }

  async function flush(): Promise<void> {
    flushScheduled = false
    // Taken already by writeNow, or waiting for the write under way (its end schedules it again).
    if (!pending || writing) return
    const pendingBatch = pending
    pending = null
    const written: Array<[PartitionState, TailEntry]> = []
    const offsetOps = offsets.take() // free riders on a write that happens anyway
    writing = true
    try {
      await startWrite(pendingBatch, written, offsetOps)
      failure = undefined
      // Durable now; readable, then resolved, so what a publisher awaited is there to read.
      for (const [p, entry] of written) append(p, entry, tailBytes)
      published.duration.observe(secondsSince(pendingBatch.startedNs))
      published.records.inc(pendingBatch.records)
      pendingBatch.resolve()
    } catch (err) {
      failure = err
      // Its offsets stay a gap that readers step over.
      offsets.requeue(offsetOps)
      published.failures.inc()
      pendingBatch.reject(new SluiceError('LOG_UNAVAILABLE', 'the local log could not write', { cause: err }))
    } finally {
      writing = false
      scheduleFlush() // what gathered meanwhile
    }
  }

  /**
   * Starts the write of `pendingBatch`, adding what the tail takes to `written`. Its ops live only
   * here: nothing holds them, or the events in them, while the write waits for the WAL sync.
   */
  function startWrite(pendingBatch: Pending, written: Array<[PartitionState, TailEntry]>, offsetOps: WriteOp[]) {
    const ops: WriteOp[] = []
    for (const [p, batch] of pendingBatch.batches) {
      const buffer = encodeBatch(batch.parts)
      ops.push({ type: 'put', key: logKey(p.topic, p.partition, batch.first), value: buffer })
      written.push([p, { first: batch.first, count: batch.count, buffer, shared: sharedOf(batch.parts) }])
    }
    pendingBatch.batches.clear()
    for (const op of pendingBatch.ops) ops.push(op)
    pendingBatch.ops = []
    for (const op of offsetOps) ops.push(op)
    return rocks.write(ops)
  }

  return {
    publish,
    commit,
    writeNow,
    /**
     * undefined while the log takes writes, else the error of its last write. After a failure each call
     * tries `retry` (a write that changes nothing) itself: a node that is not ready is sent no requests
     * whose writes would show that it recovered.
     */
    async writeFailure(retry: () => WriteOp[]): Promise<unknown> {
      if (failure === undefined) return undefined
      try {
        await rocks.write(retry())
        failure = undefined
      } catch (err) {
        failure = err
      }
      return failure
    },
    /** Resolves once nothing published is left unwritten. */
    async drained(): Promise<void> {
      while (pending || writing) await sleep(1)
    },
  }
}
