// The local log's partitions in memory (bus/ARCHITECTURE.md): where publishing and reading stand,
// and the tail, the newest record batches kept besides RocksDB with the values their producers
// shared, so consumers that keep up never read RocksDB. Reads take whole batches, from the tail
// when it still holds where they start, else from RocksDB.
import type { Rocks } from '../core/rocks.ts'
import type { ConsumedRecord } from './types.ts'
import { decodeBatch } from './record-batch.ts'
import { logKey, offsetOf } from './local-layout.ts'

/** A durable record batch in the tail. */
export interface TailEntry {
  first: number
  count: number
  buffer: Buffer
  /** The producers' shared values (LocalRecord.shared), index for index, until every live group handled them. */
  shared?: unknown[]
}

export interface PartitionState {
  topic: string
  partition: number
  /** The offset the next published record takes, durable or not yet. */
  head: number
  /** Where what is durable, and so readable, ends. */
  durable: number
  /** Consumers that caught up, woken when `durable` moves or when they stop. */
  waiters: Array<() => void>
  tail: TailEntry[]
  tailBytes: number
  /** How many of the tail's first entries no longer hold shared values. */
  released: number
}

export function openPartition(topic: string, partition: number, end: number): PartitionState {
  return { topic, partition, head: end, durable: end, waiters: [], tail: [], tailBytes: 0, released: 0 }
}

/** Makes a durable batch readable: into the tail, whose oldest batches leave past `maxBytes`. */
export function append(p: PartitionState, entry: TailEntry, maxBytes: number): void {
  p.durable = entry.first + entry.count
  p.tail.push(entry)
  p.tailBytes += entry.buffer.length
  while (p.tailBytes > maxBytes && p.tail.length > 1) {
    p.tailBytes -= p.tail.shift()!.buffer.length
    p.released = Math.max(0, p.released - 1)
  }
  wake(p)
}

export function wake(p: PartitionState): void {
  for (const waiter of p.waiters.splice(0)) waiter()
}

/**
 * Whole record batches from `from` (a batch start) below `to`, until `limit` records (a soft limit,
 * as Kafka's: a batch is never split); `next` is where the following read starts.
 */
export async function read(
  rocks: Rocks,
  p: PartitionState,
  from: number,
  to: number,
  limit: number,
): Promise<{ records: ConsumedRecord[]; next: number }> {
  const records: ConsumedRecord[] = []
  const tail = p.tail
  if (tail.length > 0 && from >= tail[0].first) {
    for (let i = tail.findIndex((e) => e.first >= from); i !== -1 && i < tail.length && tail[i].first < to; i++) {
      decodeBatch(tail[i].buffer, tail[i].first, records, tail[i].shared)
      if (records.length >= limit) return { records, next: tail[i].first + tail[i].count }
    }
    return { records, next: to }
  }
  for await (const { key, value } of rocks.scan({
    gte: logKey(p.topic, p.partition, from),
    lt: logKey(p.topic, p.partition, to),
  })) {
    decodeBatch(value, offsetOf(key), records)
    if (records.length >= limit) return { records, next: Number(records[records.length - 1].offset) + 1 }
  }
  return { records, next: to }
}

/** The first offset of the batch that holds `offset` (records are stored a batch per key, under its first offset). */
export async function batchStart(rocks: Rocks, p: PartitionState, offset: number): Promise<number> {
  const held = p.tail.find((e) => e.first <= offset && offset < e.first + e.count)
  if (held) return held.first
  for await (const { key } of rocks.scan({
    gte: logKey(p.topic, p.partition, 0),
    lte: logKey(p.topic, p.partition, offset),
    reverse: true,
    limit: 1,
  }))
    return offsetOf(key)
  return offset
}

/**
 * Drops the shared values of the batches every live group has handled (below `handled`): held
 * until the batch leaves the tail, small records' values would dwarf the tail's bytes.
 */
export function releaseShared(p: PartitionState, handled: number): void {
  const tail = p.tail
  for (let i = p.released; i < tail.length && tail[i].first + tail[i].count <= handled; i++) {
    tail[i].shared = undefined
    p.released = i + 1
  }
}
