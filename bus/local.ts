// The embedded log: Kafka's contract (topics, partitions, consumer groups with committed
// offsets, batch reads, commit-after-handler) on RocksDB in one process.
// Keys: `L<topic>\0<partition>\0<offset hex16>` records, `O<group>\0<topic>\0<partition>` next offset,
// `T<topic>` topic spec. Concurrent publishes in one tick share one RocksDB write (group commit).
import type { Logger } from 'pino'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { SluiceError } from '../core/errors.ts'
import { withRetry, sleep } from '../core/retry.ts'
import type { Batch, Bus, BusRecord, ConsumedRecord, SubscribeOptions, Subscription, TopicPartitions, TopicSpec } from './types.ts'
import { partitionOf } from './partition.ts'

export interface LocalBusConfig {
  maxBatchRecords: number
  retentionCheckMs: number
  /**
   * How long a caught-up consumer lets records gather after it is woken (Kafka's fetch.max.wait):
   * under load, a few ms turn many one-record batches — each a read and an offset write — into few.
   */
  lingerMs?: number
}

interface TopicState { spec: TopicSpec; heads: number[]; durable: number[]; waiters: Array<Array<() => void>> }

const logKey = (topic: string, partition: number, offset: number) => `L${topic}\0${partition}\0${offset.toString(16).padStart(16, '0')}`
const offsetKey = (group: string, topic: string, partition: number) => `O${group}\0${topic}\0${partition}`

export function createLocalBus(rocks: Rocks, log: Logger, config: LocalBusConfig): Bus {
  const topics = new Map<string, TopicState>()
  const committed = new Map<string, number>() // offsetKey → next offset, for retention
  const groups = new Set<string>()
  let pending: { ops: WriteOp[]; ends: Map<TopicState, Map<number, number>>; resolve: () => void; reject: (e: unknown) => void; promise: Promise<void> } | null = null
  let closed = false
  const subscriptions = new Set<Subscription>()
  const retentionTimer = setInterval(() => void truncate().catch((err) => log.warn({ err }, 'log retention failed')), config.retentionCheckMs)
  retentionTimer.unref()

  async function lastOffset(topic: string, partition: number): Promise<number> {
    for await (const { key } of rocks.scan({ gte: logKey(topic, partition, 0), lte: logKey(topic, partition, Number.MAX_SAFE_INTEGER), reverse: true, limit: 1 })) {
      return parseInt(key.slice(key.lastIndexOf('\0') + 1), 16)
    }
    return -1
  }

  async function ensureTopics(specs: Record<string, TopicSpec>): Promise<void> {
    for (const [topic, wanted] of Object.entries(specs)) {
      if (topics.has(topic)) continue
      const stored = await rocks.get('T' + topic)
      const spec: TopicSpec = stored ? JSON.parse(stored.toString()) : wanted
      if (!stored) await rocks.write([{ type: 'put', key: 'T' + topic, value: JSON.stringify(spec) }])
      const heads: number[] = []
      for (let p = 0; p < spec.partitions; p++) heads.push((await lastOffset(topic, p)) + 1)
      topics.set(topic, { spec, heads, durable: [...heads], waiters: heads.map(() => []) })
    }
  }

  function topicState(topic: string): TopicState {
    const state = topics.get(topic)
    if (!state) throw new Error(`topic ${topic} was not ensured`)
    return state
  }

  function publish(topic: string, records: BusRecord[]): Promise<void> {
    if (closed) return Promise.reject(new SluiceError('LOG_UNAVAILABLE', 'the local log is closed'))
    const state = topicState(topic)
    if (!pending) {
      let resolve!: () => void, reject!: (e: unknown) => void
      const promise = new Promise<void>((res, rej) => { resolve = res; reject = rej })
      pending = { ops: [], ends: new Map(), resolve, reject, promise }
      setImmediate(flush)
    }
    const now = Date.now()
    const ends = pending.ends.get(state) ?? pending.ends.set(state, new Map()).get(state)!
    for (const record of records) {
      const partition = partitionOf(record.key, state.spec.partitions)
      const offset = state.heads[partition]++
      ends.set(partition, offset + 1)
      pending.ops.push({ type: 'put', key: logKey(topic, partition, offset), value: encodeRecord(record, now) })
    }
    return pending.promise
  }

  async function flush(): Promise<void> {
    const batch = pending!
    pending = null
    try {
      await rocks.write(batch.ops)
    } catch (err) {
      batch.reject(new SluiceError('LOG_UNAVAILABLE', 'the local log could not write', { cause: err }))
      return
    }
    // Only what this batch wrote becomes readable: heads may already include the next batch.
    for (const [state, ends] of batch.ends) {
      for (const [p, end] of ends) {
        state.durable[p] = Math.max(state.durable[p], end)
        for (const wake of state.waiters[p].splice(0)) wake()
      }
    }
    batch.resolve()
  }

  async function read(topic: string, partition: number, from: number, to: number, limit = to - from): Promise<ConsumedRecord[]> {
    const records: ConsumedRecord[] = []
    for await (const { key, value } of rocks.scan({ gte: logKey(topic, partition, from), lt: logKey(topic, partition, to), limit })) {
      records.push(decodeRecord(value, parseInt(key.slice(key.lastIndexOf('\0') + 1), 16)))
    }
    return records
  }

  async function subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (groups.has(options.group)) throw new Error(`group ${options.group} already has a member in this process`)
    groups.add(options.group)
    const abort = new AbortController()
    const assigned: TopicPartitions[] = options.topics.map((topic) => ({ topic, partitions: topicState(topic).heads.map((_, p) => p) }))
    await options.onAssign?.(assigned)
    const maxBatch = options.maxBatchRecords ?? config.maxBatchRecords
    const loops = assigned.flatMap(({ topic, partitions }) => partitions.map((p) => consume(topic, p)))

    async function consume(topic: string, partition: number): Promise<void> {
      const state = topicState(topic)
      const key = offsetKey(options.group, topic, partition)
      const stored = await rocks.get(key)
      let next = stored ? Number(stored.toString()) : options.fromBeginning === false ? state.durable[partition] : 0
      committed.set(key, next)
      while (!abort.signal.aborted) {
        const end = Math.min(state.durable[partition], next + maxBatch)
        if (next >= end) {
          await new Promise<void>((wake) => {
            state.waiters[partition].push(wake)
            abort.signal.addEventListener('abort', () => wake(), { once: true })
          })
          if (config.lingerMs) await sleep(config.lingerMs, abort.signal)
          continue
        }
        const records = await read(topic, partition, next, end)
        if (records.length > 0) {
          const batch: Batch = { topic, partition, records }
          const handled = await withRetry(() => options.handler(batch), {
            policy: { retries: Infinity, initialDelayMs: 100, maxDelayMs: 5_000, factor: 2, jitter: 0.2 },
            signal: abort.signal,
            onRetry: (err, attempt) => log.error({ err, group: options.group, topic, partition, attempt }, 'handler failed; redelivering batch'),
          }).then(() => true, () => false)
          if (!handled) return // stopped while retrying
        }
        next = end
        committed.set(key, next)
        await rocks.write([{ type: 'put', key, value: String(next) }])
      }
    }

    const subscription: Subscription = {
      async stop() {
        abort.abort()
        await Promise.allSettled(loops)
        await options.onRevoke?.(assigned)
        groups.delete(options.group)
        subscriptions.delete(subscription)
      },
    }
    subscriptions.add(subscription)
    return subscription
  }

  /** Up to the durable end as of the call, in pages of maxBatchRecords: what a stage restores state from. */
  async function readPartition(topic: string, partition: number, onRecords: (records: ConsumedRecord[]) => Promise<void>): Promise<void> {
    const end = topicState(topic).durable[partition]
    for (let from = 0; from < end;) {
      // Retention may have deleted a prefix, so offsets need not start at 0: page by key range, not by offset count.
      const page = await read(topic, partition, from, end, config.maxBatchRecords)
      if (page.length === 0) return
      await onRecords(page)
      from = Number(page[page.length - 1].offset) + 1
    }
  }

  async function isCompacted(topic: string): Promise<boolean> {
    const spec = topics.get(topic)?.spec ?? JSON.parse((await rocks.get('T' + topic))?.toString() ?? '{}')
    return spec.compacted === true
  }

  /**
   * Deletes, per partition, what every group that ever committed has consumed. Compacted topics
   * are kept whole: a new reader (another control-plane view, a restore) must find every key.
   */
  async function truncate(): Promise<void> {
    const minimum = new Map<string, number>()
    for await (const { key, value } of rocks.scan({ gte: 'O', lt: 'P' })) {
      const [, topic, partition] = key.slice(1).split('\0')
      if (await isCompacted(topic)) continue
      const tp = `${topic}\0${partition}`
      const next = committed.get(key) ?? Number(value.toString())
      minimum.set(tp, Math.min(minimum.get(tp) ?? Infinity, next))
    }
    const ops: WriteOp[] = []
    for (const [tp, upTo] of minimum) {
      const [topic, partition] = tp.split('\0')
      if (upTo > 0) ops.push({ type: 'delRange', start: logKey(topic, Number(partition), 0), end: logKey(topic, Number(partition), upTo) })
    }
    await rocks.write(ops)
  }

  return {
    ensureTopics,
    publish,
    subscribe,
    readPartition,
    async close() {
      clearInterval(retentionTimer)
      await Promise.all([...subscriptions].map((s) => s.stop()))
      while (pending) await sleep(1)
      closed = true
    },
  }
}

// [u16 key length][key][f64 timestamp][value]
function encodeRecord(record: BusRecord, now: number): Buffer {
  const keyBytes = Buffer.byteLength(record.key)
  const out = Buffer.allocUnsafe(2 + keyBytes + 8 + record.value.length)
  out.writeUInt16BE(keyBytes, 0)
  out.write(record.key, 2)
  out.writeDoubleBE(record.timestampMs ?? now, 2 + keyBytes)
  record.value.copy(out, 10 + keyBytes)
  return out
}

function decodeRecord(buffer: Buffer, offset: number): ConsumedRecord {
  const keyBytes = buffer.readUInt16BE(0)
  return {
    key: buffer.toString('utf8', 2, 2 + keyBytes),
    timestampMs: buffer.readDoubleBE(2 + keyBytes),
    value: buffer.subarray(10 + keyBytes),
    offset: String(offset),
  }
}
