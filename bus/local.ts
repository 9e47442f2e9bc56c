// The embedded log: Kafka's contract (topics, partitions, consumer groups with committed offsets,
// batch reads, commit after the handler) on RocksDB in one process, and what only a log in the
// process can offer, for the embedded composition alone (server/embedded.ts): producers' values shared
// with consumers, and backpressure. How it works: bus/ARCHITECTURE.md. Its parts: group commit
// (local-writer.ts), the tail and reads (local-tail.ts), groups (local-groups.ts), offsets and
// retention (local-offsets.ts), keys (local-layout.ts), record batches (record-batch.ts).
import type { Logger } from 'pino'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { SluiceError } from '../core/errors.ts'
import { keyPrefix } from '../core/keyspaces.ts'
import type { Bus, ConsumedRecord, TopicSpec } from './types.ts'
import type { Codec } from './codec.ts'
import type { Output } from './output.ts'
import type { Source } from './source.ts'
import { sharedValueOf, type LocalRecord } from './record-batch.ts'
import { lastOffset, offsetKeyParts, storedOffsets } from './local-layout.ts'
import { batchStart, openPartition, read, type PartitionState } from './local-tail.ts'
import { createOffsets, startRetention } from './local-offsets.ts'
import { createWriter, type TopicState } from './local-writer.ts'
import { createGroups } from './local-groups.ts'

export interface LocalBusConfig {
  /** A soft limit, as Kafka's: a read stops after the record batch that reaches it. */
  maxBatchRecords: number
  /** How often what every group has consumed is deleted: often, so it goes while still in a memtable. */
  retentionCheckMs: number
  /**
   * How long a caught-up consumer lets records gather after it is woken (Kafka's fetch.max.wait):
   * under load, a few ms turn many small batches, each a read and an offset write, into few.
   */
  lingerMs?: number
  /** Committed offsets are written at most this often (and with every log write, and on stop). */
  commitIntervalMs?: number
  /** Per partition, the newest record batches kept in memory too, up to this many bytes of records. */
  tailBytes?: number
}

const DEFAULT_TAIL_BYTES = 4 * 1024 * 1024
const DEFAULT_COMMIT_INTERVAL_MS = 100

/** The local log as the embedded composition sees it: a Bus, and what only a log in the process can do. */
export interface LocalLog extends Bus {
  /**
   * An output whose records carry `shareOf(value)`: consumers through `sharedSource` take it while the
   * tail holds it, instead of decoding the bytes. The producer never changes a value once published.
   */
  sharedOutput<T>(
    topic: string,
    codec: Pick<Codec<T>, 'encode'>,
    keyOf: (value: T) => string,
    shareOf: (value: T) => unknown,
  ): Output<T>
  /** Takes a record's shared value if it has one, else decodes: for codecs that decode it to an equal value. */
  sharedSource<T>(codec: Codec<T>): Source<T>
  /**
   * Writes `ops` (other key spaces than the log's) in the same RocksDB write as what is published in
   * this tick, atomically with it; resolves once durable, as a publish does (one-pass/index.ts).
   */
  commit(ops: WriteOp[]): Promise<void>
  /** Starts the write of what this tick has published and committed so far at once (local-writer.ts). */
  writeNow(): void
  /** A readiness probe (core/health.ts): undefined while the log takes writes, else why it does not. */
  writeHealth(): Promise<string | undefined>
  /**
   * Backpressure: resolves true once no live group has more than `limit` records left to handle on a
   * partition of `topics` (at once when none has), false after `timeoutMs`.
   */
  settle(topics: string[], limit: number, timeoutMs: number): Promise<boolean>
}

export function createLocalBus(rocks: Rocks, log: Logger, config: LocalBusConfig): LocalLog {
  const topics = new Map<string, TopicState>()
  let closed = false
  const offsets = createOffsets(rocks, log, config.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS)
  const writer = createWriter(rocks, offsets, config.tailBytes ?? DEFAULT_TAIL_BYTES)
  const groups = createGroups(rocks, log, topicState, offsets, config)
  const retention = startRetention(rocks, log, offsets, isCompacted, config.retentionCheckMs)

  async function ensureTopics(specs: Record<string, TopicSpec>): Promise<void> {
    for (const [topic, wanted] of Object.entries(specs)) {
      if (topics.has(topic)) continue
      const stored = await rocks.get(keyPrefix('logTopics', topic))
      const spec: TopicSpec = stored ? JSON.parse(stored.toString()) : wanted
      if (!stored) await rocks.write([{ type: 'put', key: keyPrefix('logTopics', topic), value: JSON.stringify(spec) }])
      // Retention may have deleted every batch of a partition: its end is then at least the furthest
      // any group has committed, so every group reads what is published next.
      const consumed = new Array<number>(spec.partitions).fill(0)
      for (const [key, next] of await storedOffsets(rocks)) {
        const [, of, partition] = offsetKeyParts(key)
        if (of === topic && Number(partition) < spec.partitions)
          consumed[Number(partition)] = Math.max(consumed[Number(partition)], next)
      }
      const partitions: PartitionState[] = []
      for (let p = 0; p < spec.partitions; p++)
        partitions.push(openPartition(topic, p, Math.max((await lastOffset(rocks, topic, p)) + 1, consumed[p])))
      topics.set(topic, { name: topic, spec, partitions })
    }
  }

  function topicState(topic: string): TopicState {
    const state = topics.get(topic)
    if (!state) throw new Error(`topic ${topic} was not ensured`)
    return state
  }

  function publish(topic: string, records: LocalRecord[]): Promise<void> {
    if (closed) return Promise.reject(new SluiceError('LOG_UNAVAILABLE', 'the local log is closed'))
    return writer.publish(topicState(topic), records)
  }

  /** Up to the durable end as of the call, in pages of maxBatchRecords: what a stage restores state from. */
  async function readPartition(
    topic: string,
    partition: number,
    onRecords: (records: ConsumedRecord[]) => Promise<void>,
    start = '0',
  ): Promise<void> {
    const p = topicState(topic).partitions[partition]
    const end = p.durable
    const first = Number(start)
    if (first >= end) return
    // Reads go by whole batches: from the one that holds `start`, without what precedes it.
    for (let from = first > 0 ? await batchStart(rocks, p, first) : 0; from < end; ) {
      // Retention may have deleted a prefix, so offsets need not start at 0: page by key range, not by offset count.
      const page = await read(rocks, p, from, end, config.maxBatchRecords)
      if (page.records.length === 0) return
      const records = from < first ? page.records.filter((r) => Number(r.offset) >= first) : page.records
      if (records.length > 0) await onRecords(records)
      from = page.next
    }
  }

  async function isCompacted(topic: string): Promise<boolean> {
    const key = keyPrefix('logTopics', topic)
    const spec = topics.get(topic)?.spec ?? JSON.parse((await rocks.get(key))?.toString() ?? '{}')
    return spec.compacted === true
  }

  async function writeHealth(): Promise<string | undefined> {
    // The retry rewrites a topic's spec as it is stored: a write through the same WAL that changes nothing.
    const [first] = topics.values()
    if (!first) return undefined
    const retry = () => [
      { type: 'put' as const, key: keyPrefix('logTopics', first.name), value: JSON.stringify(first.spec) },
    ]
    const failure = await writer.writeFailure(retry)
    if (failure === undefined) return undefined
    // A reason, never the error's text (it names paths): the one cause an operator can act on, or the rest.
    return /no space left|ENOSPC/i.test(causesOf(failure))
      ? "cannot write: the data dir's disk is full"
      : 'cannot write to the data dir'
  }

  return {
    ensureTopics,
    publish,
    commit: (ops) =>
      closed ? Promise.reject(new SluiceError('LOG_UNAVAILABLE', 'the local log is closed')) : writer.commit(ops),
    writeNow: writer.writeNow,
    writeHealth,
    subscribe: groups.subscribe,
    readPartition,
    consumerLag: groups.consumerLag,
    settle: groups.settle,
    sharedOutput: (topic, codec, keyOf, shareOf) => ({
      publish(values) {
        if (values.length === 0) return Promise.resolve()
        return publish(
          topic,
          values.map((value) => ({ key: keyOf(value), value: codec.encode(value), shared: shareOf(value) })),
        )
      },
    }),
    sharedSource: <T>(codec: Codec<T>): Source<T> => ({
      subscribe: groups.subscribe,
      decode(record) {
        const shared = sharedValueOf(record)
        return shared === undefined ? codec.decode(record.value) : (shared as T)
      },
    }),
    async close() {
      await retention.stop()
      await groups.stopAll()
      await offsets.write()
      await writer.drained()
      closed = true
      groups.closed()
    },
  }
}

/** An error's message and those of its causes (the binding wraps RocksDB's status in "Batch was not applied"). */
function causesOf(err: unknown, depth = 0): string {
  if (!(err instanceof Error) || depth > 5) return ''
  const inner = err instanceof AggregateError ? err.errors : [err.cause]
  return [err.message, ...inner.map((e) => causesOf(e, depth + 1))].join('\n')
}
