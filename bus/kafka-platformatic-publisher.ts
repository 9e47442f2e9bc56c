// Publishing with @platformatic/kafka: every publish from concurrent callers joins one pending
// batch, sent with one `send` (acks=all, idempotent producer) while no other send is in flight, so
// the batch grows under load instead of costing a round trip per event (group commit, as
// bus/local.ts and kafka-publisher.ts do). The client sends a batch's records to each partition
// leader and resolves only when every one of them answered, and it recovers its connections and
// its idempotent producer id by itself: no producer is retired here.
//
// Each batch has a deadline of `timeoutMs` from its first record. Past it, its callers get
// LOG_UNAVAILABLE, whatever the client still retries: a settled batch is never settled again, so
// a late success cannot turn a 503 into a 200. Records of a timed-out send may still land later;
// the caller was told they did not, and retries with the same ids are dropped by dedup.
import {
  ProduceAcks,
  Producer,
  compatibilityPartitioner,
  type CompressionAlgorithmValue,
  type MessageToProduce,
} from '@platformatic/kafka'
import { SluiceError } from '../core/errors.ts'
import { secondsSince } from '../core/metrics.ts'
import type { BusRecord } from './types.ts'
import { publishMetrics } from './metrics.ts'
import type { ClientOptions } from './kafka-platformatic-fetch.ts'

export interface PlatformaticPublisherConfig {
  timeoutMs: number
  compression: CompressionAlgorithmValue
}

// The same series as kafka-publisher.ts: which client runs under the Bus does not change the metrics.
const published = publishMetrics('kafka')

interface Pending {
  messages: MessageToProduce[]
  promise: Promise<void>
  settle: (err?: unknown) => void
}

export function createPlatformaticPublisher(client: ClientOptions, config: PlatformaticPublisherConfig) {
  const producer = new Producer({
    ...client,
    idempotent: true,
    acks: ProduceAcks.ALL,
    partitioner: compatibilityPartitioner,
    autocreateTopics: false,
    compression: config.compression,
    // The client waits 1 s between retries by default: a first send to a topic just created (its
    // leader not yet known to every broker) then missed the publish deadline. Short retries fit in it.
    retries: 20,
    retryDelay: 100,
  })
  let collecting: Pending | undefined
  let sending: Promise<void> | undefined
  let closed = false

  function newBatch(): Pending {
    let settled = false
    const startedNs = process.hrtime.bigint()
    let resolve!: () => void, reject!: (err: unknown) => void
    const promise = new Promise<void>((res, rej) => {
      resolve = res
      reject = rej
    })
    const timer = setTimeout(
      () => settle(new Error(`no acknowledgement within ${config.timeoutMs} ms`)),
      config.timeoutMs,
    )
    function settle(err?: unknown) {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (err === undefined) {
        published.duration.observe(secondsSince(startedNs))
        published.records.inc(batch.messages.length)
        resolve()
      } else {
        published.failures.inc()
        reject(new SluiceError('LOG_UNAVAILABLE', 'Kafka did not acknowledge the records', { cause: err }))
      }
    }
    const batch: Pending = { messages: [], promise, settle }
    return batch
  }

  function pump(): void {
    if (sending || !collecting) return
    const batch = collecting
    collecting = undefined
    sending = producer
      .send({ messages: batch.messages })
      .then(
        () => batch.settle(),
        (err) => batch.settle(err ?? new Error('send failed')),
      )
      .finally(() => {
        sending = undefined
        if (collecting) setImmediate(pump)
      })
  }

  return {
    /** Gets the producer id now, so the first publish does not pay for it within its deadline. */
    async connect(): Promise<void> {
      try {
        await producer.initIdempotentProducer({})
      } catch (err) {
        await producer.close().catch(() => {})
        throw new SluiceError('LOG_UNAVAILABLE', 'could not connect a Kafka producer', { cause: err })
      }
    },
    publish(topic: string, records: BusRecord[]): Promise<void> {
      if (closed) return Promise.reject(new SluiceError('LOG_UNAVAILABLE', 'the Kafka bus is closed'))
      if (records.length === 0) return Promise.resolve()
      if (!collecting) {
        collecting = newBatch()
        if (!sending) setImmediate(pump)
      }
      for (const record of records) {
        collecting.messages.push({
          topic,
          key: Buffer.from(record.key),
          // An empty value is the Bus's tombstone; Kafka's compaction needs a null one.
          value:
            record.value.length === 0
              ? undefined
              : typeof record.value === 'string'
                ? Buffer.from(record.value)
                : record.value,
          partition: record.partition,
          timestamp: record.timestampMs === undefined ? undefined : BigInt(record.timestampMs),
        })
      }
      return collecting.promise
    },
    async close() {
      closed = true
      await Promise.allSettled([collecting?.promise, sending])
      await producer.close().catch(() => {})
    },
  }
}
