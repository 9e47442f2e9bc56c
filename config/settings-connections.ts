// Settings of the distributed mode's connections: Kafka, ClickHouse (with the Insights console's caps) and the
// schema registry. Credentials have settings of their own, kept out of URLs and logs.
import { bool, choice, int, list, text } from './setting-kinds.ts'

export const CONNECTION_SETTINGS = {
  kafkaBrokers: list({
    env: 'SLUICE_KAFKA_BROKERS',
    default: [],
    doc: "The Kafka brokers' host:port; set, sluice start is distributed.",
  }),
  topicPrefix: text({
    env: 'SLUICE_TOPIC_PREFIX',
    pattern: '^[a-zA-Z0-9._-]+$',
    default: 'sluice',
    doc: 'Prefix of every Kafka topic and (unless the default) consumer group: deployments may share a Kafka.',
  }),
  kafkaClient: choice(['kafkajs', 'platformatic'], {
    env: 'SLUICE_KAFKA_CLIENT',
    default: 'platformatic',
    doc: 'The Kafka client under the Bus: @platformatic/kafka (faster) or kafkajs.',
  }),
  // kafkajs has no lz4, zstd or snappy codec: config.ts refuses them with it.
  kafkaCompression: choice(['none', 'gzip', 'snappy', 'lz4', 'zstd'], {
    env: 'SLUICE_KAFKA_COMPRESSION',
    default: 'none',
    doc: 'How producers compress record batches; snappy, lz4 and zstd on the platformatic client only.',
  }),
  // Also how long a restarted member waits for a killed one's partitions.
  kafkaSessionTimeoutMs: int({
    env: 'SLUICE_KAFKA_SESSION_TIMEOUT_MS',
    min: 1000,
    max: 300_000,
    default: 6000,
    doc: 'A consumer silent this long leaves its group and its partitions move.',
  }),
  kafkaHeartbeatIntervalMs: int({
    env: 'SLUICE_KAFKA_HEARTBEAT_INTERVAL_MS',
    min: 100,
    max: 60_000,
    default: 1000,
    doc: 'How often a consumer tells its group it is alive; well below the session timeout.',
  }),
  kafkaTls: bool({
    env: 'SLUICE_KAFKA_TLS',
    default: false,
    doc: "TLS to the brokers, trusting Node's root CAs; implied by the CA or certificate file.",
  }),
  kafkaCaFile: text({ env: 'SLUICE_KAFKA_CA_FILE', doc: "PEM file of the CA that signed the brokers' certificates." }),
  kafkaCertFile: text({
    env: 'SLUICE_KAFKA_CERT_FILE',
    doc: 'PEM client certificate (mutual TLS); needs the key file.',
  }),
  kafkaKeyFile: text({ env: 'SLUICE_KAFKA_KEY_FILE', doc: 'PEM private key of the client certificate.' }),
  kafkaSaslMechanism: choice(['plain', 'scram-sha-256', 'scram-sha-512'], {
    env: 'SLUICE_KAFKA_SASL_MECHANISM',
    doc: 'SASL to the brokers; needs the user name and password.',
  }),
  kafkaUsername: text({ env: 'SLUICE_KAFKA_USERNAME', doc: 'SASL user name.' }),
  kafkaPassword: text({ env: 'SLUICE_KAFKA_PASSWORD', secret: true, doc: 'SASL password.' }),
  clickhouseUrl: text({
    env: 'SLUICE_CLICKHOUSE_URL',
    doc: 'ClickHouse HTTP interface (http://host:8123), for the sink, api and transformer roles.',
  }),
  clickhouseDatabase: text({
    env: 'SLUICE_CLICKHOUSE_DATABASE',
    pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$',
    default: 'sluice',
    doc: 'Database of the events, runs and webhook requests tables (created if missing).',
  }),
  // Bounds on every store read (REST listings included): over them, QUERY_TOO_COSTLY. No 0: never unbounded.
  clickhouseQueryTimeoutSeconds: int({
    env: 'SLUICE_CLICKHOUSE_QUERY_TIMEOUT_SECONDS',
    min: 1,
    max: 3600,
    default: 10,
    doc: 'Longest a read of the ClickHouse store may run.',
  }),
  clickhouseMaxRowsToRead: int({
    env: 'SLUICE_CLICKHOUSE_MAX_ROWS_TO_READ',
    min: 1,
    default: 100_000_000,
    doc: 'Most rows one read of the ClickHouse store (or one Insights SQL query) may read.',
  }),
  // docs/clickhouse.md, "On a cluster": replicated local tables, a Distributed table over each, every DDL ON CLUSTER.
  clickhouseCluster: text({
    env: 'SLUICE_CLICKHOUSE_CLUSTER',
    // Empty is unset, as the chart's default.
    minLength: 0,
    pattern: '^([a-zA-Z_][a-zA-Z0-9_]*)?$',
    doc: "Create the tables on this cluster of the servers' remote_servers (unset: one server).",
  }),
  clickhouseInsertQuorum: int({
    env: 'SLUICE_CLICKHOUSE_INSERT_QUORUM',
    min: 0,
    max: 16,
    default: 0,
    doc: "On a cluster, replicas that must have each insert; 0: a majority of the smallest shard's.",
  }),
  clickhouseUser: text({ env: 'SLUICE_CLICKHOUSE_USER', doc: "ClickHouse user (unset: ClickHouse's default)." }),
  clickhousePassword: text({
    env: 'SLUICE_CLICKHOUSE_PASSWORD',
    minLength: 0,
    secret: true,
    doc: 'ClickHouse password; needs the user.',
  }),
  clickhouseCaFile: text({
    env: 'SLUICE_CLICKHOUSE_CA_FILE',
    doc: "PEM file of the CA that signed an https ClickHouse's certificate.",
  }),
  // The Insights SQL console (api/insights.ts): more rows are cut; over the bytes or time, QUERY_TOO_COSTLY.
  insightsMaxRows: int({
    env: 'SLUICE_INSIGHTS_MAX_ROWS',
    min: 1,
    max: 100_000,
    default: 1000,
    doc: 'Most rows one Insights SQL answer holds.',
  }),
  insightsMaxResultBytes: int({
    env: 'SLUICE_INSIGHTS_MAX_RESULT_BYTES',
    min: 1024,
    max: 1024 * 1024 * 1024,
    default: 8 * 1024 * 1024,
    doc: 'Largest result of one Insights SQL query.',
  }),
  insightsQueryTimeoutSeconds: int({
    env: 'SLUICE_INSIGHTS_QUERY_TIMEOUT_SECONDS',
    min: 1,
    max: 3600,
    default: 10,
    doc: 'Longest an Insights SQL query may run.',
  }),
  schemaRegistryUrl: text({
    env: 'SLUICE_SCHEMA_REGISTRY_URL',
    doc: 'Confluent-compatible schema registry; set, records use the Confluent wire format.',
  }),
  schemaRegistryUser: text({ env: 'SLUICE_SCHEMA_REGISTRY_USER', doc: 'Schema registry basic-auth user.' }),
  schemaRegistryPassword: text({
    env: 'SLUICE_SCHEMA_REGISTRY_PASSWORD',
    secret: true,
    doc: 'Schema registry basic-auth password.',
  }),
}
