// What the Kafka Bus core (kafka.ts) asks of a Kafka client: only the calls Sluice makes. Each
// client is a small adapter of this port, @platformatic/kafka (kafka-platformatic*.ts, the
// default) and kafkajs (kafka-kafkajs*.ts); topics, group commit, partition ownership, lag and
// restores are written once, over it. bus/ARCHITECTURE.md, "Kafka", tells how the parts meet.
import type { Logger } from 'pino'
import type { BusRecord, ConsumedRecord, TopicPartitions } from './types.ts'
import type { KafkaBusConfig } from './kafka-config.ts'

export interface NewTopic {
  topic: string
  partitions: number
  configs: Array<{ name: string; value: string }>
}

export interface TopicLayout {
  partitions: number
  /** Every partition has a leader. */
  led: boolean
}

export interface PartitionRange {
  partition: number
  /** The first retained record's offset. */
  low: bigint
  /** The end: the offset the next record will get (high watermark). */
  high: bigint
}

/** A producer: acks=all, idempotent, the Java client's murmur2 partitioner (or a record's own partition). */
export interface KafkaProducer {
  /** Connects it (an idempotent producer gets its id), so that a publish need not pay for it within its deadline. */
  connect(): Promise<void>
  /** Writes the records; resolves only once every partition a record went to answered. */
  send(records: Map<string, BusRecord[]>): Promise<void>
  /** Ends it, with any retry it still makes in the background. */
  close(): Promise<void>
}

export interface GroupOptions {
  /** As Kafka knows the group: the config's groupPrefix included. */
  groupId: string
  topics: string[]
  /** Where a partition with no committed offset starts: its first retained record, else its end. */
  fromBeginning: boolean
  /** Partition i of every topic to one member (kafka-range-assignment.ts), else the client's default. */
  coPartitioned: boolean
}

/**
 * The core's side of a subscription (kafka-subscriber.ts), driven by the client's group member:
 * it keeps which partitions this member owns and hands their records to the handler.
 */
export interface PartitionOwner {
  /**
   * The group (re)assigned this member, which it knows as `memberId`: queued after any earlier
   * reassignment. Resolves with the partitions owned once this one is done, for a client that
   * fetches by itself to fetch; undefined when a later rejoin, loss or stop made it stale.
   */
  assigned(memberId: string, assignment: TopicPartitions[]): Promise<TopicPartitions[] | undefined>
  /** The member left the group without asking (crash, eviction): every partition is revoked. */
  lost(): void
  /** The member is about to rejoin: a reassignment still queued must not start fetching again. */
  rejoining(): void
  /** Resolves once every reassignment queued so far is done (onAssign before any batch of it). */
  settled(): Promise<void>
  /**
   * Hands `records` of one partition to the handler in batches, each retried until it is handled;
   * stops at the first batch that is not (the partition is lost, the subscription stops, or
   * `signal`). Resolves with how many records were handled, from the first: those may be committed.
   */
  handle(topic: string, partition: number, records: ConsumedRecord[], signal?: AbortSignal): Promise<number>
  /** Whether this member owns the partition now: only an owner commits its offsets. */
  owns(topic: string, partition: number): boolean
}

/** A member of a consumer group, as a client joined it. */
export interface GroupMember {
  /**
   * False while the member is out of its group: after a join that failed or heartbeats that stalled,
   * until it is in again (/readyz says so: a member out of its group consumes nothing).
   */
  inGroup(): boolean
  /** Fetches nothing more for the owner and waits for the batches in flight (the subscription stops). */
  stopFetching(): Promise<void>
  /** Leaves the group (after the core revoked every partition). */
  leave(): Promise<void>
}

/** Reads one partition onward from an offset, outside any group. */
export interface PartitionReader {
  /** The next records, and the offset after them (past compacted gaps and control records too). */
  next(): Promise<{ records: ConsumedRecord[]; next: bigint }>
  close(): Promise<void>
}

/** A link of an error's chain (kafka-errors.ts walks cause, originalError and errors[]). */
export interface ErrorLink {
  name?: string
  code?: string | number
  message?: string
  /** The Kafka protocol error's name, where the client gives it. */
  apiId?: string
}

export interface KafkaClient {
  /**
   * Connects to a broker with one short try, not the client's usual retries: a refused login or
   * an untrusted certificate fails the same way every time. Rejects with the client's own error.
   */
  connect(): Promise<void>
  /** Resolves once a broker answered a metadata request (readiness). */
  ping(): Promise<void>
  listTopics(): Promise<string[]>
  /** Creates the topics; one that another node created meanwhile counts as created. */
  createTopics(topics: NewTopic[]): Promise<void>
  /** The layout of each topic the brokers know, asked of them (no cached metadata). */
  describeTopics(topics: string[]): Promise<Map<string, TopicLayout>>
  /** The retained range of every partition of `topic`. */
  partitionRanges(topic: string): Promise<PartitionRange[]>
  /** What `groupId` committed on each partition, by `topic\0partition`; absent or negative where nothing. */
  committedOffsets(groupId: string, partitions: TopicPartitions[]): Promise<Map<string, bigint>>
  producer(): KafkaProducer
  /**
   * Joins the group and lets the owner know of every assignment, hands it the records of what it
   * owns and commits what it handled. Resolves once joined (the first assignment may be queued).
   */
  join(group: GroupOptions, owner: PartitionOwner): Promise<GroupMember>
  /** Reads `topic`/`partition` from `from`, its first retained offset as the core just asked. */
  reader(topic: string, partition: number, from: bigint): PartitionReader
  /** Whether an error link is the brokers refusing the SASL login. */
  saslRefused(link: ErrorLink): boolean
  close(): Promise<void>
}

export type KafkaClientFactory = (config: KafkaBusConfig, log: Logger) => KafkaClient

export const tpKey = (topic: string, partition: number) => `${topic}\0${partition}`
