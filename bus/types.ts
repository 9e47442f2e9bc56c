// The log between stages. Semantics are Kafka's, kept small, so that the local RocksDB
// adapter and the Kafka adapter are interchangeable (see DESIGN.md, "The Bus").
export interface BusRecord {
  /** Partition key: records with the same key keep their order. */
  key: string
  value: Buffer
  timestampMs?: number
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

export interface TopicPartitions { topic: string; partitions: number[] }

export interface TopicSpec {
  partitions: number
  /** Keep only the newest record per key (control plane, dedup changelog). */
  compacted?: boolean
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
  maxBatchRecords?: number
}

export interface Subscription { stop(): Promise<void> }

export interface Bus {
  ensureTopics(topics: Record<string, TopicSpec>): Promise<void>
  /** Resolves only once every record is durable; rejects with LOG_UNAVAILABLE otherwise. */
  publish(topic: string, records: BusRecord[]): Promise<void>
  subscribe(options: SubscribeOptions): Promise<Subscription>
  close(): Promise<void>
}
