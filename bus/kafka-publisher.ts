// Publishing to Kafka, whichever client: every publish from concurrent callers joins one pending
// batch, sent with one `send` (acks=all, idempotent producer) while no other send is in flight, so
// the batch grows under load instead of costing a round trip per event (group commit, as
// bus/local.ts does).
//
// Each batch has a deadline of PUBLISH_DEADLINE_MS from its first record. Past it, its callers get
// LOG_UNAVAILABLE, whatever the client is still retrying: a settled batch is never settled again, so
// a late success cannot turn a 503 into a 200. A batch whose send failed or timed out leaves its
// producer in an unknown state (sequence numbers, a request in flight to a dead broker), so that
// producer is retired and the next batch connects a fresh one: this is how publishing recovers by
// itself when the broker comes back, and why a send stuck on a frozen broker holds up no later
// batch. Records of a timed-out send may still land later; the caller was told they did not, and
// retries with the same ids are dropped by dedup.
import type { Logger } from 'pino'
import { SluiceError } from '../core/errors.ts'
import { secondsSince } from '../core/metrics.ts'
import type { BusRecord } from './types.ts'
import type { KafkaProducer } from './kafka-port.ts'
import { publishMetrics } from './metrics.ts'

/** Ingest answers 503 within about this long rather than hold a request while the brokers may be gone. */
const PUBLISH_DEADLINE_MS = 1000

// Which client runs under the Bus does not change the metrics.
const published = publishMetrics('kafka')

export interface KafkaPublisher {
  publish(topic: string, records: BusRecord[]): Promise<void>
  /** Connects the producer ahead of the first publish; rejects with LOG_UNAVAILABLE when it cannot. */
  connect(): Promise<void>
  close(): Promise<void>
}

interface PendingBatch {
  records: Map<string, BusRecord[]>
  count: number
  settled: boolean
  promise: Promise<void>
  settle(err?: unknown): void
}

export function createKafkaPublisher(newProducer: () => KafkaProducer, log: Logger): KafkaPublisher {
  let collecting: PendingBatch | null = null
  let sending: PendingBatch | null = null
  let producer: Promise<KafkaProducer> | null = null
  const retiring = new Set<Promise<void>>()
  let closed = false

  function connected(): Promise<KafkaProducer> {
    const created = newProducer()
    return created.connect().then(
      () => created,
      async (err) => {
        await created.close().catch(() => {})
        throw err
      },
    )
  }

  function retire(current: Promise<KafkaProducer>): void {
    if (producer === current) producer = null
    const done = current.then((p) => p.close()).catch(() => {})
    retiring.add(done)
    void done.finally(() => retiring.delete(done))
  }

  function newBatch(): PendingBatch {
    let resolve!: () => void, reject!: (err: unknown) => void
    const promise = new Promise<void>((res, rej) => {
      resolve = res
      reject = rej
    })
    const startedNs = process.hrtime.bigint()
    const batch: PendingBatch = {
      records: new Map(),
      count: 0,
      settled: false,
      promise,
      settle(err) {
        if (batch.settled) return
        batch.settled = true
        clearTimeout(timer)
        if (err === undefined) {
          published.duration.observe(secondsSince(startedNs))
          published.records.inc(batch.count)
          resolve()
        } else {
          published.failures.inc()
          reject(new SluiceError('LOG_UNAVAILABLE', 'Kafka did not take the records in time; retry', { cause: err }))
        }
      },
    }
    const timer = setTimeout(() => expire(batch), PUBLISH_DEADLINE_MS)
    return batch
  }

  function expire(batch: PendingBatch): void {
    if (batch.settled) return
    batch.settle(new Error(`no acknowledgement within ${PUBLISH_DEADLINE_MS} ms`))
    if (collecting === batch) collecting = null // never sent: its records will not land
    if (sending === batch) {
      // The send is stuck (broker down, leader moving): stop waiting for it and its producer.
      if (producer) retire(producer)
      sending = null
      void pump()
    }
  }

  async function pump(): Promise<void> {
    if (sending || !collecting) return
    const batch = collecting
    collecting = null
    sending = batch
    producer ??= connected()
    const current = producer
    try {
      const ready = await current
      if (batch.settled) return // expired while connecting: send nothing
      await ready.send(batch.records)
      batch.settle()
    } catch (err) {
      if (!batch.settled) log.warn({ err }, 'kafka send failed; the next batch uses a new producer')
      retire(current)
      batch.settle(err)
    } finally {
      if (sending === batch) {
        sending = null
        void pump()
      }
    }
  }

  return {
    publish(topic, records) {
      if (closed) return Promise.reject(new SluiceError('LOG_UNAVAILABLE', 'the Kafka bus is closed'))
      if (records.length === 0) return Promise.resolve()
      if (!collecting) {
        collecting = newBatch()
        if (!sending) setImmediate(pump)
      }
      const pending = collecting.records.get(topic)
      if (pending) for (const record of records) pending.push(record)
      else collecting.records.set(topic, [...records])
      collecting.count += records.length
      return collecting.promise
    },
    async connect() {
      producer ??= connected()
      const current = producer
      try {
        await current
      } catch (err) {
        retire(current)
        throw new SluiceError('LOG_UNAVAILABLE', 'could not connect a Kafka producer', { cause: err })
      }
    },
    async close() {
      closed = true
      await Promise.allSettled([collecting?.promise, sending?.promise])
      if (producer) retire(producer)
      await Promise.all([...retiring])
    },
  }
}
