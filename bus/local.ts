// The embedded log: Kafka's contract (topics, partitions, consumer groups with committed
// offsets, batch reads, commit-after-handler) on RocksDB in one process; its keys are in
// bus/local-layout.ts. As in Kafka, records are stored in batches: what every publish of one
// event-loop tick sends to a partition is one RocksDB value (group commit), so a 500-event request
// costs one write and one read per partition, not 500. Offsets still count records; a group
// commits only at batch ends, so reads always start at one.
import type { Logger } from 'pino'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { SluiceError } from '../core/errors.ts'
import { onceEvery, retryPolicies, sleep, withRetry } from '../core/retry.ts'
import { secondsSince } from '../core/metrics.ts'
import type {
  Batch,
  Bus,
  BusRecord,
  ConsumedRecord,
  ConsumerLag,
  SubscribeOptions,
  Subscription,
  TopicPartitions,
  TopicSpec,
} from './types.ts'
import { partitionOf } from './partition.ts'
import { decodeBatch, decodedOf, encodeBatch, type BatchPart } from './record-batch.ts'
import { lastOffset, logKey, offsetKey, offsetKeyParts, offsetOf, truncate } from './local-layout.ts'
import { keyPrefix, keyRange } from '../core/keyspaces.ts'
import { publishMetrics } from './metrics.ts'

export interface LocalBusConfig {
  /** A soft limit, as Kafka's: a read stops after the record batch that reaches it. */
  maxBatchRecords: number
  /**
   * How often what every group has consumed is deleted. Often (the default is 100 ms), so most
   * record batches are deleted while still in RocksDB's memtable and are never flushed or compacted.
   */
  retentionCheckMs: number
  /**
   * How long a caught-up consumer lets records gather after it is woken (Kafka's fetch.max.wait):
   * under load, a few ms turn many small batches — each a read and an offset write — into few.
   */
  lingerMs?: number
  /**
   * Committed offsets are written at most this often (and on every log write, and on stop), not
   * once per batch. A crash redelivers what was handled since: delivery is at-least-once anyway.
   */
  commitIntervalMs?: number
  /**
   * Per partition, the newest record batches stay in memory too (with the producers' own values,
   * BusRecord.decoded), up to this many bytes of records: consumers that keep up never read RocksDB.
   */
  tailBytes?: number
}

const DEFAULT_TAIL_BYTES = 4 * 1024 * 1024
const MAX_FLUSHES_IN_FLIGHT = 4

interface Position {
  topic: string
  partition: number
  key: string
}
interface Written {
  first: number
  count: number
  buffer: Buffer
  /** The producers' own values (BusRecord.decoded), handed to consumers that read the tail. */
  decoded?: unknown[]
}
interface TopicState {
  name: string
  spec: TopicSpec
  heads: number[]
  durable: number[]
  waiters: Array<Array<() => void>>
  tails: Written[][]
  tailBytes: number[]
  /** Per partition, how many of the tail's first entries no longer hold their producers' values. */
  released: number[]
}
/**
 * What one flush writes: per topic and partition, the first offset and the records from it on, as
 * published (a publish to a topic of one partition is kept as its array, not copied record by record).
 */
type Pending = {
  batches: Map<TopicState, Map<number, { first: number; parts: BatchPart[]; count: number }>>
  resolve: () => void
  reject: (e: unknown) => void
  promise: Promise<void>
  startedNs: bigint
  records: number
}

const published = publishMetrics('local')

export function createLocalBus(rocks: Rocks, log: Logger, config: LocalBusConfig): Bus & Required<Pick<Bus, 'settle'>> {
  const tailBytes = config.tailBytes ?? DEFAULT_TAIL_BYTES
  const topics = new Map<string, TopicState>()
  const committed = new Map<string, number>() // offsetKey → next offset, for retention
  const unwritten = new Map<string, number>() // committed offsets not yet in RocksDB
  let offsetTimer: NodeJS.Timeout | undefined
  const groups = new Set<string>()
  let pending: Pending | null = null
  // Flushes overlap (a RocksDB write waits for a thread), but become readable in the order they
  // were issued: a later batch must never be read before an earlier one.
  const inFlight: Array<{ written: boolean; apply?: () => void }> = []
  let flushScheduled = false
  let closed = false
  /**
   * Live subscriptions: the group's metrics name, and per partition it consumes, the key its
   * position is committed under (consumer lag, backpressure, releasing shared values).
   */
  const subscriptions = new Map<Subscription, { label: string; positions: Position[] }>()
  /** Per `topic\0partition`, the offset below which retention has deleted the log: each check deletes only what is new. */
  const truncated = new Map<string, number>()
  let truncation: Promise<void> | undefined
  // Both run every ~100 ms and fail together while the disk is full: a warning each 10 s at most.
  const retentionFailed = onceEvery(10_000)
  const offsetsFailed = onceEvery(10_000)
  const retentionTimer = setInterval(() => {
    truncation ??= truncate(rocks, committed, truncated, isCompacted)
      .catch((err) => retentionFailed((skipped) => log.warn({ err, skipped }, 'log retention failed')))
      .finally(() => {
        truncation = undefined
      })
  }, config.retentionCheckMs)
  retentionTimer.unref()

  async function ensureTopics(specs: Record<string, TopicSpec>): Promise<void> {
    for (const [topic, wanted] of Object.entries(specs)) {
      if (topics.has(topic)) continue
      const stored = await rocks.get(keyPrefix('logTopics', topic))
      const spec: TopicSpec = stored ? JSON.parse(stored.toString()) : wanted
      if (!stored) await rocks.write([{ type: 'put', key: keyPrefix('logTopics', topic), value: JSON.stringify(spec) }])
      // Retention may have deleted every batch of a partition: its end is then at least the furthest
      // any group has committed, so every group reads what is published next.
      const consumed = new Array<number>(spec.partitions).fill(0)
      for await (const { key, value } of rocks.scan(keyRange('logOffsets'))) {
        const [, of, partition] = offsetKeyParts(key)
        if (of === topic && Number(partition) < spec.partitions)
          consumed[Number(partition)] = Math.max(consumed[Number(partition)], Number(value.toString()))
      }
      const heads: number[] = []
      for (let p = 0; p < spec.partitions; p++)
        heads.push(Math.max((await lastOffset(rocks, topic, p)) + 1, consumed[p]))
      topics.set(topic, {
        name: topic,
        spec,
        heads,
        durable: [...heads],
        waiters: heads.map(() => []),
        tails: heads.map(() => []),
        tailBytes: heads.map(() => 0),
        released: heads.map(() => 0),
      })
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
    const wrong = records.find(
      (r) => r.partition !== undefined && !(r.partition >= 0 && r.partition < state.spec.partitions),
    )
    if (wrong) return Promise.reject(new Error(`topic ${topic} has no partition ${wrong.partition}`))
    if (!pending) {
      let resolve!: () => void, reject!: (e: unknown) => void
      const promise = new Promise<void>((res, rej) => {
        resolve = res
        reject = rej
      })
      pending = { batches: new Map(), resolve, reject, promise, startedNs: process.hrtime.bigint(), records: 0 }
      scheduleFlush()
    }
    pending.records += records.length
    const atMs = Date.now()
    const partitions = pending.batches.get(state) ?? pending.batches.set(state, new Map()).get(state)!
    const add = (partition: number, part: BusRecord[]) => {
      if (part.length === 0) return
      const batch =
        partitions.get(partition) ??
        partitions.set(partition, { first: state.heads[partition], parts: [], count: 0 }).get(partition)!
      batch.parts.push({ records: part, atMs })
      batch.count += part.length
      state.heads[partition] += part.length
    }
    if (state.spec.partitions === 1) {
      add(0, records) // kept as it is: a publisher never changes what it published
    } else {
      const byPartition = new Map<number, BusRecord[]>()
      for (const record of records) {
        const partition = record.partition ?? partitionOf(record.key, state.spec.partitions)
        const part = byPartition.get(partition)
        if (part) part.push(record)
        else byPartition.set(partition, [record])
      }
      for (const [partition, part] of byPartition) add(partition, part)
    }
    return pending.promise
  }

  function scheduleFlush(): void {
    if (!pending || flushScheduled || inFlight.length >= MAX_FLUSHES_IN_FLIGHT) return
    flushScheduled = true
    setImmediate(flush)
  }

  async function flush(): Promise<void> {
    flushScheduled = false
    const pendingBatch = pending!
    pending = null
    const ops: WriteOp[] = []
    const written: Array<[TopicState, number, Written]> = []
    for (const [state, partitions] of pendingBatch.batches) {
      for (const [p, batch] of partitions) {
        const buffer = encodeBatch(batch.parts)
        ops.push({ type: 'put', key: logKey(state.name, p, batch.first), value: buffer })
        const decoded = batch.parts[0].records[0].decoded === undefined ? undefined : decodedOf(batch.parts)
        written.push([state, p, { first: batch.first, count: batch.count, buffer, decoded }])
      }
    }
    const offsets = offsetWrites() // free riders on a write that happens anyway
    ops.push(...offsets)
    const slot: (typeof inFlight)[number] = { written: false }
    inFlight.push(slot)
    try {
      await rocks.write(ops)
      // Durable now; readable (and resolved, so what a publisher awaited is there to read) in order.
      slot.apply = () => {
        for (const [state, p, entry] of written) {
          state.durable[p] = entry.first + entry.count
          const tail = state.tails[p]
          tail.push(entry)
          state.tailBytes[p] += entry.buffer.length
          while (state.tailBytes[p] > tailBytes && tail.length > 1) {
            state.tailBytes[p] -= tail.shift()!.buffer.length
            state.released[p] = Math.max(0, state.released[p] - 1)
          }
          for (const wake of state.waiters[p].splice(0)) wake()
        }
        published.duration.observe(secondsSince(pendingBatch.startedNs))
        published.records.inc(pendingBatch.records)
        pendingBatch.resolve()
      }
    } catch (err) {
      // Its offsets stay a gap that readers step over.
      requeue(offsets)
      published.failures.inc()
      pendingBatch.reject(new SluiceError('LOG_UNAVAILABLE', 'the local log could not write', { cause: err }))
    } finally {
      slot.written = true
      while (inFlight.length > 0 && inFlight[0].written) inFlight.shift()!.apply?.()
      scheduleFlush() // what gathered meanwhile
    }
  }

  /** Whole record batches from `from` (a batch start) below `to`, until `limit` records; `next` is where the following read starts. */
  async function read(
    topic: string,
    partition: number,
    from: number,
    to: number,
    limit: number,
  ): Promise<{ records: ConsumedRecord[]; next: number }> {
    const records: ConsumedRecord[] = []
    const tail = topicState(topic).tails[partition]
    if (tail.length > 0 && from >= tail[0].first) {
      for (let i = tail.findIndex((e) => e.first >= from); i !== -1 && i < tail.length && tail[i].first < to; i++) {
        decodeBatch(tail[i].buffer, tail[i].first, records, tail[i].decoded)
        if (records.length >= limit) return { records, next: tail[i].first + tail[i].count }
      }
      return { records, next: to }
    }
    for await (const { key, value } of rocks.scan({
      gte: logKey(topic, partition, from),
      lt: logKey(topic, partition, to),
    })) {
      decodeBatch(value, offsetOf(key), records)
      if (records.length >= limit) return { records, next: Number(records[records.length - 1].offset) + 1 }
    }
    return { records, next: to }
  }

  async function subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (groups.has(options.group)) throw new Error(`group ${options.group} already has a member in this process`)
    groups.add(options.group)
    const abort = new AbortController()
    const assigned: TopicPartitions[] = options.topics.map((topic) => ({
      topic,
      partitions: topicState(topic).heads.map((_, p) => p),
    }))
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
        if (next >= state.durable[partition]) {
          await new Promise<void>((wake) => state.waiters[partition].push(wake)) // stop() wakes it too
          if (config.lingerMs) await new Promise((linger) => setTimeout(linger, config.lingerMs))
          continue
        }
        const { records, next: end } = await read(topic, partition, next, state.durable[partition], maxBatch)
        if (records.length > 0) {
          const batch: Batch = { topic, partition, records }
          const handled = await withRetry(() => options.handler(batch), {
            policy: retryPolicies.stageHandler,
            signal: abort.signal,
            onRetry: (err, attempt) =>
              log.error({ err, group: options.group, topic, partition, attempt }, 'handler failed; redelivering batch'),
          }).then(
            () => true,
            () => false,
          )
          if (!handled) return // stopped while retrying
        }
        next = end
        commit(key, next)
        releaseDecoded(state, partition)
      }
    }

    const subscription: Subscription = {
      async stop() {
        abort.abort()
        for (const { topic, partitions } of assigned)
          for (const p of partitions) for (const wake of topicState(topic).waiters[p].splice(0)) wake()
        await Promise.allSettled(loops)
        await writeOffsets()
        await options.onRevoke?.(assigned)
        groups.delete(options.group)
        subscriptions.delete(subscription)
      },
    }
    subscriptions.set(subscription, {
      label: options.metricsGroup ?? options.group,
      positions: assigned.flatMap(({ topic, partitions }) =>
        partitions.map((partition) => ({ topic, partition, key: offsetKey(options.group, topic, partition) })),
      ),
    })
    return subscription
  }

  /**
   * The producers' values stay in the tail only until every live group of the partition has
   * handled them: held longer, a tail of small records kept ~100 MiB of objects alive.
   */
  function releaseDecoded(state: TopicState, p: number): void {
    let handled = Number.POSITIVE_INFINITY
    for (const { positions } of subscriptions.values())
      for (const { topic, partition, key } of positions)
        if (topic === state.name && partition === p) handled = Math.min(handled, committed.get(key) ?? 0)
    const tail = state.tails[p]
    for (let i = state.released[p]; i < tail.length && tail[i].first + tail[i].count <= handled; i++) {
      tail[i].decoded = undefined
      state.released[p] = i + 1
    }
  }

  /** The most records a live group has yet to handle on one partition of `topics`. */
  function backlog(topics: string[]): number {
    let most = 0
    for (const { positions } of subscriptions.values()) {
      for (const { topic, partition, key } of positions) {
        const next = committed.get(key)
        // A group whose loop has not read its committed offset yet is only starting.
        if (next !== undefined && topics.includes(topic))
          most = Math.max(most, topicState(topic).durable[partition] - next)
      }
    }
    return most
  }

  /** Publishers waiting for the pipeline: woken on commits, which is when a backlog shrinks. */
  const settling = new Set<{ topics: string[]; limit: number; done: (settled: boolean) => void }>()

  function settle(topics: string[], limit: number, timeoutMs: number): Promise<boolean> {
    if (backlog(topics) <= limit) return Promise.resolve(true)
    return new Promise((resolve) => {
      const waiter = {
        topics,
        limit,
        done: (settled: boolean) => {
          settling.delete(waiter)
          clearTimeout(timer)
          resolve(settled)
        },
      }
      const timer = setTimeout(() => waiter.done(false), timeoutMs)
      settling.add(waiter)
    })
  }

  function wakeSettled(): void {
    const backlogs = new Map<string[], number>() // waiters mostly share their topics: computed once per commit
    for (const waiter of settling) {
      const behind =
        backlogs.get(waiter.topics) ?? backlogs.set(waiter.topics, backlog(waiter.topics)).get(waiter.topics)!
      if (behind <= waiter.limit || closed) waiter.done(!closed)
    }
  }

  function commit(key: string, next: number): void {
    committed.set(key, next)
    if (settling.size > 0) wakeSettled()
    unwritten.set(key, next)
    if (offsetTimer) return
    offsetTimer = setTimeout(
      () =>
        void writeOffsets().catch((err) =>
          offsetsFailed((skipped) => log.warn({ err, skipped }, 'offset commit failed; retrying')),
        ),
      config.commitIntervalMs ?? 100,
    )
    offsetTimer.unref()
  }

  function requeue(ops: WriteOp[]): void {
    for (const op of ops) if (op.type === 'put' && !unwritten.has(op.key)) commit(op.key, Number(op.value))
  }

  function offsetWrites(): WriteOp[] {
    clearTimeout(offsetTimer)
    offsetTimer = undefined
    const ops: WriteOp[] = [...unwritten].map(([key, next]) => ({ type: 'put', key, value: String(next) }))
    unwritten.clear()
    return ops
  }

  async function writeOffsets(): Promise<void> {
    const ops = offsetWrites()
    try {
      await rocks.write(ops)
    } catch (err) {
      requeue(ops)
      throw err
    }
  }

  /** Up to the durable end as of the call, in pages of maxBatchRecords: what a stage restores state from. */
  async function readPartition(
    topic: string,
    partition: number,
    onRecords: (records: ConsumedRecord[]) => Promise<void>,
  ): Promise<void> {
    const end = topicState(topic).durable[partition]
    for (let from = 0; from < end; ) {
      // Retention may have deleted a prefix, so offsets need not start at 0: page by key range, not by offset count.
      const page = await read(topic, partition, from, end, config.maxBatchRecords)
      if (page.records.length === 0) return
      await onRecords(page.records)
      from = page.next
    }
  }

  async function consumerLag(): Promise<ConsumerLag[]> {
    const lags: ConsumerLag[] = []
    for (const { label, positions } of subscriptions.values()) {
      for (const { topic, partition, key } of positions) {
        const next = committed.get(key)
        if (next === undefined) continue // its loop has not read its committed offset yet
        lags.push({ group: label, topic, partition, records: topicState(topic).durable[partition] - next })
      }
    }
    return lags
  }

  async function isCompacted(topic: string): Promise<boolean> {
    const key = keyPrefix('logTopics', topic)
    const spec = topics.get(topic)?.spec ?? JSON.parse((await rocks.get(key))?.toString() ?? '{}')
    return spec.compacted === true
  }

  return {
    ensureTopics,
    publish,
    subscribe,
    readPartition,
    consumerLag,
    settle,
    async close() {
      clearInterval(retentionTimer)
      await truncation
      await Promise.all([...subscriptions.keys()].map((s) => s.stop()))
      await writeOffsets()
      while (pending || inFlight.length > 0) await sleep(1)
      closed = true
      wakeSettled()
    },
  }
}
