// A kafkajs producer for the core's publisher (kafka-publisher.ts): one `sendBatch` per send,
// acks=all, idempotent.
//
// A send counts as done only if every partition it put a record on answered. kafkajs 2.2.4 can
// resolve `sendBatch` without writing a partition: when a broker answers "not the leader" and the
// partition's new leader already answered for other partitions of the same send, the retry skips
// that broker (sendMessages keeps one response per broker), so the moved partition's records are
// never sent. Trusting that success lost webhook events whose requests were recorded delivered.
import {
  CompressionTypes,
  Partitioners,
  type Message,
  type PartitionerArgs,
  type Producer,
  type ProducerConfig,
  type RecordMetadata,
} from 'kafkajs'
import type { BusRecord } from './types.ts'
import type { KafkaBusConfig } from './kafka-config.ts'
import { tpKey, type KafkaProducer } from './kafka-port.ts'

/** What the producer uses of a kafkajs client: a `Kafka` is one. */
export interface ProducerFactory {
  producer(config: ProducerConfig): Pick<Producer, 'connect' | 'disconnect' | 'sendBatch'>
}

export function createKafkajsProducer(
  kafka: ProducerFactory,
  config: Pick<KafkaBusConfig, 'compression'>,
): KafkaProducer {
  /** The partitions the partitioner put records on during the send in flight (the core sends one at a time). */
  const targets = new Set<string>()
  // kafkajs' own partitioner (murmur2, or the record's explicit partition), noting where each record goes.
  const recordingPartitioner = () => {
    const partition = Partitioners.DefaultPartitioner()
    return (args: PartitionerArgs) => {
      const chosen = partition(args)
      targets.add(tpKey(args.topic, chosen))
      return chosen
    }
  }
  const producer = kafka.producer({
    idempotent: true,
    // kafkajs allows only one request in flight per broker for an idempotent producer.
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: recordingPartitioner,
    // Bounded, unlike kafkajs' default for idempotence: a send that outlives its deadline is
    // abandoned with its producer anyway, and must not retry in the background for ever.
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 },
  })
  return {
    connect: () => producer.connect(),
    async send(records) {
      targets.clear()
      const answered = await producer.sendBatch({
        topicMessages: [...records].map(([topic, batch]) => ({ topic, messages: batch.map(toMessage) })),
        acks: -1,
        compression: config.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
      })
      const unanswered = unansweredPartitions(targets, answered)
      if (unanswered.length > 0)
        throw new Error(`the send reported success, but no broker took its records for ${unanswered.join(', ')}`)
    },
    close: () => producer.disconnect(),
  }
}

function toMessage(record: BusRecord): Message {
  return {
    key: record.key,
    partition: record.partition,
    // An empty value is the Bus's tombstone; Kafka's compaction needs a null one.
    value: record.value.length === 0 ? null : record.value,
    timestamp: record.timestampMs === undefined ? undefined : String(record.timestampMs),
  }
}

/** Partitions the partitioner put records on that no broker's answer covers, as `topic/partition`. */
function unansweredPartitions(targets: Set<string>, answered: RecordMetadata[]): string[] {
  const covered = new Set(answered.map((r) => tpKey(r.topicName, r.partition)))
  return [...targets].filter((key) => !covered.has(key)).map((key) => key.replace('\0', '/'))
}
