// The log between stages. Semantics are Kafka's, kept small, so that the local RocksDB
// adapter and the Kafka adapter are interchangeable (see DESIGN.md, "The Bus"; bus/ARCHITECTURE.md).
export interface BusRecord {
  /** Partition key: records with the same key keep their order. */
  key: string
  /**
   * A string is sent as its UTF-8 bytes. An empty value is a tombstone: on a compacted topic it lets
   * the key be dropped (Kafka: a null value).
   */
  value: Buffer | string
  timestampMs?: number
  /** Where the record goes instead of its key's partition: a changelog kept per partition beside another topic. */
  partition?: number
}

export interface ConsumedRecord {
  key: string
  value: Buffer
  timestampMs: number
  offset: string
}

export interface Batch {
  topic: string
  partition: number
  records: ConsumedRecord[]
}

export interface TopicPartitions {
  topic: string
  partitions: number[]
}

export interface TopicSpec {
  partitions: number
  /** Keep only the newest record per key (control plane, dedup changelog). */
  compacted?: boolean
  /** Kafka only: drop records older than this (with `compacted`: compact and delete). The local log keeps
   * a topic until every group consumed it, and keeps compacted topics whole. */
  retentionMs?: number
}

export interface SubscribeOptions {
  group: string
  topics: string[]
  /** Resolving commits the batch's offsets; throwing redelivers it (at-least-once). */
  handler: (batch: Batch) => Promise<void>
  /** Called before any batch of a newly assigned partition, so a stateful stage can open/restore state. */
  onAssign?: (assigned: TopicPartitions[]) => Promise<void>
  /** Called after the last batch of a partition that is taken away, so state can be closed. */
  onRevoke?: (revoked: TopicPartitions[]) => Promise<void>
  /** Where a group with no committed offset starts; default: the beginning. */
  fromBeginning?: boolean
  /**
   * Partition i of every topic goes to one member (Kafka's range assignment), so records keyed alike
   * on topics of the same partition count are handled by one process; default: the client's own
   * assignment. The local log's one member holds every partition anyway.
   */
  coPartitioned?: boolean
  maxBatchRecords?: number
  /** The group's name in metrics (consumer lag), when `group` is made unique per process; default `group`. */
  metricsGroup?: string
}

export interface Subscription {
  stop(): Promise<void>
}

/** How far one consumer group is behind on one partition this process owns (a metric, not a position). */
export interface ConsumerLag {
  /** The group as metrics name it: its `metricsGroup`, else the group. */
  group: string
  topic: string
  partition: number
  /**
   * The partition's end offset minus the group's committed offset, or minus the partition's first
   * retained offset while the group has committed nothing there.
   */
  records: number
}

export interface Bus {
  ensureTopics(topics: Record<string, TopicSpec>): Promise<void>
  /**
   * Resolves only once every record is durable; rejects with LOG_UNAVAILABLE otherwise. The caller
   * changes neither `records` nor a record in it afterwards: an adapter may hold them until written.
   */
  publish(topic: string, records: BusRecord[]): Promise<void>
  subscribe(options: SubscribeOptions): Promise<Subscription>
  /**
   * Reads one partition from its first retained record up to its end as of the call (what a
   * stateful stage restores from: dedup changelog, control plane), in order, outside any group.
   * `onRecords` is awaited before the next records; resolves once the end is reached. `from`, an
   * offset, starts the read there instead (the last record read's offset + 1 continues a read).
   */
  readPartition(
    topic: string,
    partition: number,
    onRecords: (records: ConsumedRecord[]) => Promise<void>,
    from?: string,
  ): Promise<void>
  /**
   * For every partition a subscription of this process owns now (not its group's other members'):
   * the records its group has yet to commit, so summing over a group's members counts each
   * partition once. Read when metrics are scraped; Kafka asks the brokers, so it may reject.
   */
  consumerLag(): Promise<ConsumerLag[]>
  close(): Promise<void>
}
