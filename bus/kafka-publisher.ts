// Publishing to Kafka: every publish from concurrent callers joins one pending batch, sent with
// one `sendBatch` (acks=all, idempotent producer) while no other send is in flight, so the batch
// grows under load instead of costing a round trip per event (group commit, as bus/local.ts does).
//
// Each batch has a deadline of `timeoutMs` from its first record. Past it, its callers get
// LOG_UNAVAILABLE, whatever kafkajs is still retrying: a settled batch is never settled again, so
// a late success cannot turn a 503 into a 200. A batch whose send failed or timed out leaves its
// producer in an unknown state (sequence numbers, a request in flight to a dead broker), so that
// producer is retired and the next batch connects a fresh one: this is how publishing recovers
// by itself when the broker comes back. Records of a timed-out send may still land later; the
// caller was told they did not, and retries with the same ids are dropped by dedup.
//
// A send counts as done only if every partition it put a record on answered. kafkajs 2.2.4 can
// resolve `sendBatch` without writing a partition: when a broker answers "not the leader" and the
// partition's new leader already answered for other partitions of the same send, the retry skips
// that broker (sendMessages keeps one response per broker), so the moved partition's records are
// never sent. Trusting that success lost webhook events whose requests were recorded delivered.
import type { Logger } from 'pino'
import {
  CompressionTypes,
  Partitioners,
  type Message,
  type PartitionerArgs,
  type Producer,
  type ProducerConfig,
  type RecordMetadata,
} from 'kafkajs'
import { SluiceError } from '../core/errors.ts'
import { secondsSince } from '../core/metrics.ts'
import type { BusRecord } from './types.ts'
import { publishMetrics } from './metrics.ts'

export interface KafkaPublisherConfig {
  timeoutMs: number
  /** Record batches compressed with gzip, the one codec kafkajs has built in. */
  gzip?: boolean
}

/** What the publisher uses of a kafkajs client: a `Kafka` is one. */
export interface ProducerFactory {
  producer(config: ProducerConfig): Pick<Producer, 'connect' | 'disconnect' | 'sendBatch'>
}

type PublishingProducer = ReturnType<ProducerFactory['producer']>

/** A connected producer and the partitions its partitioner put records on since `targets` was cleared. */
interface Connected {
  producer: PublishingProducer
  targets: Set<string>
}

const partitionKey = (topic: string, partition: number) => `${topic}\0${partition}`
const published = publishMetrics('kafka')

export interface KafkaPublisher {
  publish(topic: string, records: BusRecord[]): Promise<void>
  /** Connects the producer ahead of the first publish; rejects with LOG_UNAVAILABLE when it cannot. */
  connect(): Promise<void>
  close(): Promise<void>
}

interface PendingBatch {
  messages: Map<string, Message[]>
  records: number
  settled: boolean
  promise: Promise<void>
  settle(err?: unknown): void
}

export function createKafkaPublisher(
  kafka: ProducerFactory,
  config: KafkaPublisherConfig,
  log: Logger,
): KafkaPublisher {
  let collecting: PendingBatch | null = null
  let sending: PendingBatch | null = null
  let producer: Promise<Connected> | null = null
  const retiring = new Set<Promise<void>>()
  let closed = false

  function newProducer(): Promise<Connected> {
    const targets = new Set<string>()
    // kafkajs' own partitioner (murmur2, or the record's explicit partition), noting where each record goes.
    const recordingPartitioner = () => {
      const partition = Partitioners.DefaultPartitioner()
      return (args: PartitionerArgs) => {
        const chosen = partition(args)
        targets.add(partitionKey(args.topic, chosen))
        return chosen
      }
    }
    const created = kafka.producer({
      idempotent: true,
      // kafkajs allows only one request in flight per broker for an idempotent producer.
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: recordingPartitioner,
      // Bounded, unlike kafkajs' default for idempotence: a send that outlives its deadline is
      // abandoned with its producer anyway, and must not retry in the background for ever.
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 },
    })
    return created.connect().then(() => ({ producer: created, targets }))
  }

  function retire(current: Promise<Connected>): void {
    if (producer === current) producer = null
    const done = current.then((c) => c.producer.disconnect()).catch(() => {})
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
      messages: new Map(),
      records: 0,
      settled: false,
      promise,
      settle(err) {
        if (batch.settled) return
        batch.settled = true
        clearTimeout(timer)
        if (err === undefined) {
          published.duration.observe(secondsSince(startedNs))
          published.records.inc(batch.records)
          resolve()
        } else {
          published.failures.inc()
          reject(new SluiceError('LOG_UNAVAILABLE', 'Kafka did not take the records in time; retry', { cause: err }))
        }
      },
    }
    const timer = setTimeout(() => expire(batch), config.timeoutMs)
    return batch
  }

  function expire(batch: PendingBatch): void {
    if (batch.settled) return
    batch.settle(new Error(`no acknowledgement within ${config.timeoutMs} ms`))
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
    producer ??= newProducer()
    const current = producer
    try {
      const connected = await current
      if (batch.settled) return // expired while connecting: send nothing
      const topicMessages = [...batch.messages].map(([topic, messages]) => ({ topic, messages }))
      connected.targets.clear() // one send at a time per producer: what it notes now is this batch's
      const answered = await connected.producer.sendBatch({
        topicMessages,
        acks: -1,
        compression: config.gzip ? CompressionTypes.GZIP : CompressionTypes.None,
      })
      const unanswered = unansweredPartitions(connected.targets, answered)
      if (unanswered.length > 0)
        throw new Error(`the send reported success, but no broker took its records for ${unanswered.join(', ')}`)
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
      const messages = collecting.messages.get(topic) ?? collecting.messages.set(topic, []).get(topic)!
      collecting.records += records.length
      for (const record of records) {
        messages.push({
          key: record.key,
          partition: record.partition,
          // An empty value is the Bus's tombstone; Kafka's compaction needs a null one.
          value: record.value.length === 0 ? null : record.value,
          timestamp: record.timestampMs === undefined ? undefined : String(record.timestampMs),
        })
      }
      return collecting.promise
    },
    async connect() {
      producer ??= newProducer()
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

/** Partitions the partitioner put records on that no broker's answer covers, as `topic/partition`. */
function unansweredPartitions(targets: Set<string>, answered: RecordMetadata[]): string[] {
  const covered = new Set(answered.map((r) => partitionKey(r.topicName, r.partition)))
  return [...targets].filter((key) => !covered.has(key)).map((key) => key.replace('\0', '/'))
}
