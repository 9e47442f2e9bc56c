// The settings of the Kafka Bus, whichever client runs under it (kafka-port.ts). Every tunable is
// required: server/distributed.ts passes the config's values, and config/config.ts holds their defaults.

export interface KafkaBusConfig {
  brokers: string[]
  clientId: string
  /** A consumer that stops heartbeating for this long loses its partitions to the rest of its group. */
  sessionTimeoutMs: number
  heartbeatIntervalMs: number
  /**
   * This process's name across restarts (kept in its data dir). @platformatic/kafka joins each group
   * as a static member (`group.instance.id` = `<instanceId>.<group>`), so a process restarted after a
   * kill -9 takes its partitions back at once instead of after its old session expired. kafkajs has
   * no static membership; it ignores this.
   */
  instanceId?: string
  /** How the producer compresses record batches (kafkajs: none or gzip). Consumers decompress whatever they get. */
  compression: 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd'
  /**
   * Put before every consumer group id, so deployments sharing a Kafka (each with its topic prefix)
   * do not share groups: members of one group rebalance together, and a crashed member of one
   * deployment would stall the other's rebalances for a session timeout.
   */
  groupPrefix: string
  /** TLS to the brokers; PEM text. Without `ca`, Node's trusted roots (a managed Kafka's public CA). */
  tls?: { ca?: string; cert?: string; key?: string }
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
}
