// The only module that reads process.env. Flags win over env vars, env vars over defaults;
// one TypeBox schema validates the result, which is frozen and handed out in slices.
import { readFileSync } from 'node:fs'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { SluiceError } from '../core/errors.ts'
import type { RocksMemory } from '../core/rocks.ts'

const Int = (min: number, max = Number.MAX_SAFE_INTEGER) => Type.Integer({ minimum: min, maximum: max })

const Text = Type.String({ minLength: 1 })

// Health, shutdown and secure connections (docs/operations.md).
const OPS_SETTINGS = {
  /** The /healthz and /readyz listener of a process that serves no HTTP role (the others answer on `port`). */
  opsPort: Int(0, 65535),
  /** SIGTERM: the time to drain and exit in, below Kubernetes' 30 s terminationGracePeriodSeconds. */
  shutdownGraceMs: Int(1000, 600_000),
  /** SIGTERM: /readyz answers 503 this long before the listener closes, so load balancers stop sending first. */
  shutdownDelayMs: Int(0, 60_000),
  /** The Kafka client under the Bus: @platformatic/kafka (bus/kafka-platformatic*, the default) or kafkajs. */
  kafkaClient: Type.Union([Type.Literal('kafkajs'), Type.Literal('platformatic')]),
  /** How producers compress record batches: lz4 and zstd on @platformatic/kafka only (kafkajs has gzip). */
  kafkaCompression: Type.Union([
    Type.Literal('none'),
    Type.Literal('gzip'),
    Type.Literal('snappy'),
    Type.Literal('lz4'),
    Type.Literal('zstd'),
  ]),
  kafkaSessionTimeoutMs: Int(1000, 300_000),
  kafkaHeartbeatIntervalMs: Int(100, 60_000),
  kafkaTls: Type.Boolean(),
  kafkaCaFile: Type.Optional(Text),
  kafkaCertFile: Type.Optional(Text),
  kafkaKeyFile: Type.Optional(Text),
  kafkaSaslMechanism: Type.Optional(
    Type.Union([Type.Literal('plain'), Type.Literal('scram-sha-256'), Type.Literal('scram-sha-512')]),
  ),
  kafkaUsername: Type.Optional(Text),
  kafkaPassword: Type.Optional(Text),
  clickhouseUser: Type.Optional(Text),
  clickhousePassword: Type.Optional(Type.String()),
  clickhouseCaFile: Type.Optional(Text),
  schemaRegistryUser: Type.Optional(Text),
  schemaRegistryPassword: Type.Optional(Text),
}

/** Settings that may also be read from a file: `SLUICE_X_FILE` / `--x-file` (Kubernetes Secret volumes). */
export const SECRET_FIELDS = ['signingKey', 'kafkaPassword', 'clickhousePassword', 'schemaRegistryPassword'] as const

export const ConfigSchema = Type.Object({
  mode: Type.Union([Type.Literal('dev'), Type.Literal('start')]),
  roles: Type.Array(
    Type.Union(
      ['all', 'ingest', 'transformer', 'dedup', 'router', 'sink', 'runner', 'api'].map((r) => Type.Literal(r)),
    ),
  ),
  host: Type.String({ minLength: 1 }),
  port: Int(0, 65535),
  dataDir: Type.String({ minLength: 1 }),
  signingKey: Type.Optional(Type.String({ minLength: 16 })),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  trustProxy: Type.Array(Type.String()),
  maxBodyBytes: Int(1024),
  maxBodyCeilingBytes: Int(1024),
  maxEvents: Int(1),
  /** Event API events per second per environment and ingest node; 0: no limit. An environment may set its own. */
  maxEventsPerSecond: Int(0),
  maxJsonDepth: Int(2, 1000),
  maxNameLength: Int(1),
  maxIdLength: Int(1),
  partitions: Int(1, 1024),
  dedupWindowMs: Int(1000),
  eventRetentionMs: Int(0),
  topicPrefix: Type.String({ pattern: '^[a-zA-Z0-9._-]+$' }),
  kafkaBrokers: Type.Array(Type.String({ minLength: 1 })),
  /** A consumer silent this long loses its partitions; also how long a restarted member waits for a killed one's. */
  clickhouseUrl: Type.Optional(Type.String({ minLength: 1 })),
  clickhouseDatabase: Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' }),
  /** Bounds on every store read (REST listings included): over them, QUERY_TOO_COSTLY. No 0: never unbounded. */
  clickhouseQueryTimeoutSeconds: Int(1, 3600),
  clickhouseMaxRowsToRead: Int(1),
  /** The Insights SQL console (api/insights.ts): rows of one answer (more are cut), its bytes and time (over: QUERY_TOO_COSTLY). */
  insightsMaxRows: Int(1, 100_000),
  insightsMaxResultBytes: Int(1024, 1024 * 1024 * 1024),
  insightsQueryTimeoutSeconds: Int(1, 3600),
  schemaRegistryUrl: Type.Optional(Type.String({ minLength: 1 })),
  functionsFile: Type.Optional(Type.String({ minLength: 1 })),
  watch: Type.Boolean(),
  transformCpuTimeMs: Int(1, 60_000),
  transformWallTimeMs: Int(1, 300_000),
  transformIsolateMemoryMb: Int(8, 4096),
  transformMaxOutputBytes: Int(1024),
  transformIsolates: Int(1, 256),
  // Tunables of the stages (cli/compose.ts, cli/embedded.ts, cli/parts-functions.ts): batch sizes trade
  // latency for throughput; the defaults are what the benchmarks under bench/ were run with.
  storeBatchRecords: Int(1, 100_000),
  transformerBatchRecords: Int(1, 100_000),
  runSinkBatchRecords: Int(1, 100_000),
  routerBatchRecords: Int(1, 100_000),
  runnerBatchRecords: Int(1, 100_000),
  dedupExpireIntervalMs: Int(1000),
  functionMarkRetentionMs: Int(60_000),
  localLogBatchRecords: Int(1, 100_000),
  localLogLingerMs: Int(0, 1000),
  localLogRetentionCheckMs: Int(10),
  localLogTailBytes: Int(64 * 1024, 1024 * 1024 * 1024),
  localLogMaxBacklogRecords: Int(0),
  localLogBacklogWaitMs: Int(0, 60_000),
  localLogShareValues: Type.Boolean(),
  rocksdbWriteBufferMb: Int(1, 4096),
  rocksdbWriteBuffers: Int(2, 64),
  rocksdbMaxOpenFiles: Int(20, 1_000_000),
  /** V8's old generation grows to at most 1 + this/100 times what was live at its last full collection; 0: V8's own (up to 4×). */
  heapGrowingPercent: Int(0, 1000),
  ...OPS_SETTINGS,
  /** One webhook's requests transformed at once; a transform not yet proven within its limits gets 1. */
  transformWebhookConcurrency: Int(1, 256),
  /** Limit kills (CPU, wall time, memory) in a row that pause a webhook's transform. */
  transformBreakerKills: Int(1, 1000),
  transformBreakerPauseMs: Int(1000, 24 * 60 * 60 * 1000),
  /** How long a transform call may run in the shared lane before its webhook moves to the slow lane. */
  transformBudgetMs: Int(1, 300_000),
  /** The slow lane's own isolates. */
  transformSlowIsolates: Int(1, 256),
  // The HTTP server (api/edge.ts): a slow or idle client holds a connection only so long.
  requestTimeoutMs: Int(0),
  headersTimeoutMs: Int(1),
  keepAliveTimeoutMs: Int(1),
  socketIdleTimeoutMs: Int(0),
  /** Connections past this are refused; 0: no cap. */
  maxConnections: Int(0),
  /** Names the dev server answers to besides loopback names, IP addresses and `host` (DNS rebinding). */
  allowedHosts: Type.Array(Type.String({ minLength: 1 })),
})

export type Config = Readonly<Static<typeof ConfigSchema>>
export type Flags = Record<string, string | boolean | undefined>

// flag name → [env var, parse]
export const SOURCES: Record<string, [string, (v: string) => unknown]> = {
  roles: ['SLUICE_ROLES', list],
  host: ['SLUICE_HOST', String],
  port: ['SLUICE_PORT', Number],
  dataDir: ['SLUICE_DATA_DIR', String],
  signingKey: ['SLUICE_SIGNING_KEY', String],
  logLevel: ['SLUICE_LOG_LEVEL', String],
  trustProxy: ['SLUICE_TRUST_PROXY', list],
  maxBodyBytes: ['SLUICE_MAX_BODY_BYTES', Number],
  maxBodyCeilingBytes: ['SLUICE_MAX_BODY_CEILING_BYTES', Number],
  maxEvents: ['SLUICE_MAX_EVENTS', Number],
  maxEventsPerSecond: ['SLUICE_MAX_EVENTS_PER_SECOND', Number],
  maxJsonDepth: ['SLUICE_MAX_JSON_DEPTH', Number],
  partitions: ['SLUICE_PARTITIONS', Number],
  dedupWindowMs: ['SLUICE_DEDUP_WINDOW_MS', Number],
  eventRetentionMs: ['SLUICE_EVENT_RETENTION_MS', Number],
  topicPrefix: ['SLUICE_TOPIC_PREFIX', String],
  kafkaBrokers: ['SLUICE_KAFKA_BROKERS', list],
  kafkaSessionTimeoutMs: ['SLUICE_KAFKA_SESSION_TIMEOUT_MS', Number],
  kafkaClient: ['SLUICE_KAFKA_CLIENT', (v) => v.toLowerCase()],
  kafkaCompression: ['SLUICE_KAFKA_COMPRESSION', (v) => v.toLowerCase()],
  clickhouseUrl: ['SLUICE_CLICKHOUSE_URL', String],
  clickhouseDatabase: ['SLUICE_CLICKHOUSE_DATABASE', String],
  clickhouseQueryTimeoutSeconds: ['SLUICE_CLICKHOUSE_QUERY_TIMEOUT_SECONDS', Number],
  clickhouseMaxRowsToRead: ['SLUICE_CLICKHOUSE_MAX_ROWS_TO_READ', Number],
  insightsMaxRows: ['SLUICE_INSIGHTS_MAX_ROWS', Number],
  insightsMaxResultBytes: ['SLUICE_INSIGHTS_MAX_RESULT_BYTES', Number],
  insightsQueryTimeoutSeconds: ['SLUICE_INSIGHTS_QUERY_TIMEOUT_SECONDS', Number],
  schemaRegistryUrl: ['SLUICE_SCHEMA_REGISTRY_URL', String],
  functionsFile: ['SLUICE_FUNCTIONS', String],
  watch: ['SLUICE_WATCH', (v) => v === 'true' || v === '1'],
  transformCpuTimeMs: ['SLUICE_TRANSFORM_CPU_TIME_MS', Number],
  transformWallTimeMs: ['SLUICE_TRANSFORM_WALL_TIME_MS', Number],
  transformIsolateMemoryMb: ['SLUICE_TRANSFORM_ISOLATE_MEMORY_MB', Number],
  transformMaxOutputBytes: ['SLUICE_TRANSFORM_MAX_OUTPUT_BYTES', Number],
  transformIsolates: ['SLUICE_TRANSFORM_ISOLATES', Number],
  storeBatchRecords: ['SLUICE_STORE_BATCH_RECORDS', Number],
  transformerBatchRecords: ['SLUICE_TRANSFORMER_BATCH_RECORDS', Number],
  runSinkBatchRecords: ['SLUICE_RUN_SINK_BATCH_RECORDS', Number],
  routerBatchRecords: ['SLUICE_ROUTER_BATCH_RECORDS', Number],
  runnerBatchRecords: ['SLUICE_RUNNER_BATCH_RECORDS', Number],
  dedupExpireIntervalMs: ['SLUICE_DEDUP_EXPIRE_INTERVAL_MS', Number],
  functionMarkRetentionMs: ['SLUICE_FUNCTION_MARK_RETENTION_MS', Number],
  localLogBatchRecords: ['SLUICE_LOCAL_LOG_BATCH_RECORDS', Number],
  localLogLingerMs: ['SLUICE_LOCAL_LOG_LINGER_MS', Number],
  localLogRetentionCheckMs: ['SLUICE_LOCAL_LOG_RETENTION_CHECK_MS', Number],
  localLogTailBytes: ['SLUICE_LOCAL_LOG_TAIL_BYTES', Number],
  localLogMaxBacklogRecords: ['SLUICE_LOCAL_LOG_MAX_BACKLOG_RECORDS', Number],
  localLogBacklogWaitMs: ['SLUICE_LOCAL_LOG_BACKLOG_WAIT_MS', Number],
  localLogShareValues: ['SLUICE_LOCAL_LOG_SHARE_VALUES', (v) => v === 'true' || v === '1'],
  rocksdbWriteBufferMb: ['SLUICE_ROCKSDB_WRITE_BUFFER_MB', Number],
  rocksdbWriteBuffers: ['SLUICE_ROCKSDB_WRITE_BUFFERS', Number],
  rocksdbMaxOpenFiles: ['SLUICE_ROCKSDB_MAX_OPEN_FILES', Number],
  heapGrowingPercent: ['SLUICE_HEAP_GROWING_PERCENT', Number],
  maxNameLength: ['SLUICE_MAX_NAME_LENGTH', Number],
  maxIdLength: ['SLUICE_MAX_ID_LENGTH', Number],
  opsPort: ['SLUICE_OPS_PORT', Number],
  shutdownGraceMs: ['SLUICE_SHUTDOWN_GRACE_MS', Number],
  shutdownDelayMs: ['SLUICE_SHUTDOWN_DELAY_MS', Number],
  kafkaHeartbeatIntervalMs: ['SLUICE_KAFKA_HEARTBEAT_INTERVAL_MS', Number],
  kafkaTls: ['SLUICE_KAFKA_TLS', bool],
  kafkaCaFile: ['SLUICE_KAFKA_CA_FILE', String],
  kafkaCertFile: ['SLUICE_KAFKA_CERT_FILE', String],
  kafkaKeyFile: ['SLUICE_KAFKA_KEY_FILE', String],
  kafkaSaslMechanism: ['SLUICE_KAFKA_SASL_MECHANISM', (v) => v.toLowerCase()],
  kafkaUsername: ['SLUICE_KAFKA_USERNAME', String],
  kafkaPassword: ['SLUICE_KAFKA_PASSWORD', String],
  clickhouseUser: ['SLUICE_CLICKHOUSE_USER', String],
  clickhousePassword: ['SLUICE_CLICKHOUSE_PASSWORD', String],
  clickhouseCaFile: ['SLUICE_CLICKHOUSE_CA_FILE', String],
  schemaRegistryUser: ['SLUICE_SCHEMA_REGISTRY_USER', String],
  schemaRegistryPassword: ['SLUICE_SCHEMA_REGISTRY_PASSWORD', String],
  transformWebhookConcurrency: ['SLUICE_TRANSFORM_WEBHOOK_CONCURRENCY', Number],
  transformBreakerKills: ['SLUICE_TRANSFORM_BREAKER_KILLS', Number],
  transformBreakerPauseMs: ['SLUICE_TRANSFORM_BREAKER_PAUSE_MS', Number],
  transformBudgetMs: ['SLUICE_TRANSFORM_BUDGET_MS', Number],
  transformSlowIsolates: ['SLUICE_TRANSFORM_SLOW_ISOLATES', Number],
  requestTimeoutMs: ['SLUICE_REQUEST_TIMEOUT_MS', Number],
  headersTimeoutMs: ['SLUICE_HEADERS_TIMEOUT_MS', Number],
  keepAliveTimeoutMs: ['SLUICE_KEEP_ALIVE_TIMEOUT_MS', Number],
  socketIdleTimeoutMs: ['SLUICE_SOCKET_IDLE_TIMEOUT_MS', Number],
  maxConnections: ['SLUICE_MAX_CONNECTIONS', Number],
  allowedHosts: ['SLUICE_ALLOWED_HOSTS', list],
}

/** The command-line flag of a setting (`--kebab-name` but for these). */
const FLAG_NAMES: Record<string, string> = { roles: 'role', functionsFile: 'functions' }
export const flagName = (field: string): string => FLAG_NAMES[field] ?? kebab(field)

export const DEFAULTS = {
  roles: ['all'],
  host: '127.0.0.1',
  port: 8288,
  dataDir: '.sluice',
  logLevel: 'info',
  trustProxy: [],
  maxBodyBytes: 512 * 1024,
  maxBodyCeilingBytes: 64 * 1024 * 1024,
  maxEvents: 5000,
  maxEventsPerSecond: 0,
  maxJsonDepth: 64,
  maxNameLength: 256,
  maxIdLength: 512,
  partitions: 4,
  dedupWindowMs: 24 * 60 * 60 * 1000,
  eventRetentionMs: 0,
  topicPrefix: 'sluice',
  kafkaBrokers: [],
  clickhouseDatabase: 'sluice',
  watch: false,
  clickhouseQueryTimeoutSeconds: 10,
  clickhouseMaxRowsToRead: 100_000_000,
  insightsMaxRows: 1000,
  insightsMaxResultBytes: 8 * 1024 * 1024,
  insightsQueryTimeoutSeconds: 10,
  transformCpuTimeMs: 100,
  transformWallTimeMs: 1000,
  transformIsolateMemoryMb: 32,
  transformMaxOutputBytes: 1024 * 1024,
  transformIsolates: 2,
  storeBatchRecords: 5000,
  transformerBatchRecords: 256,
  runSinkBatchRecords: 2000,
  routerBatchRecords: 1000,
  runnerBatchRecords: 200,
  dedupExpireIntervalMs: 60_000,
  functionMarkRetentionMs: 7 * 24 * 60 * 60_000,
  localLogBatchRecords: 1000,
  localLogLingerMs: 2,
  localLogRetentionCheckMs: 100,
  localLogTailBytes: 4 * 1024 * 1024,
  localLogMaxBacklogRecords: 10_000,
  localLogBacklogWaitMs: 1000,
  localLogShareValues: true,
  rocksdbWriteBufferMb: 16,
  rocksdbWriteBuffers: 2,
  rocksdbMaxOpenFiles: 1000,
  heapGrowingPercent: 0,
  opsPort: 8289,
  shutdownGraceMs: 25_000,
  shutdownDelayMs: 0,
  kafkaSessionTimeoutMs: 6000,
  kafkaClient: 'platformatic',
  kafkaCompression: 'none',
  kafkaHeartbeatIntervalMs: 1000,
  kafkaTls: false,
  transformWebhookConcurrency: 32,
  transformBreakerKills: 3,
  transformBreakerPauseMs: 60_000,
  transformBudgetMs: 100,
  transformSlowIsolates: 1,
  // Keep-alive outlives the 60 s idle timeout of common load balancers, so they never reuse a
  // connection Sluice is closing (fastify's default, for the same reason).
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 72_000,
  socketIdleTimeoutMs: 120_000,
  maxConnections: 10_000,
  allowedHosts: [],
}

export function loadConfig(mode: 'dev' | 'start', flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = { ...DEFAULTS, mode }
  for (const [field, [envVar, parse]] of Object.entries(SOURCES)) {
    const flag = flags[field]
    if (flag !== undefined) raw[field] = typeof flag === 'boolean' ? flag : parse(flag)
    else if (env[envVar] !== undefined && env[envVar] !== '') raw[field] = parse(env[envVar]!)
    else if (isSecret(field)) raw[field] = readSecretFile(field, secretFile(field, flags, env))
    if (raw[field] === undefined) delete raw[field]
  }
  if (!Value.Check(ConfigSchema, raw)) {
    const first = Value.Errors(ConfigSchema, raw).First()!
    const field = first.path.slice(1).split('/')[0]
    const hint = SOURCES[field] ? ` (--${flagName(field)} / ${SOURCES[field][0]})` : ''
    throw new SluiceError('CONFIG_INVALID', `${field}${hint}: ${first.message}`)
  }
  const config = raw as Config
  if (mode === 'start' && !config.signingKey)
    throw new SluiceError(
      'CONFIG_INVALID',
      'signingKey (--signing-key / SLUICE_SIGNING_KEY): required by sluice start (at least 16 characters)',
    )
  checkPairs(config)
  return Object.freeze(config)
}

/** Settings that mean nothing alone, or nothing with another: refused at startup rather than silently ignored. */
function checkPairs(config: Config): void {
  const setting = (f: string) => `${f} (--${flagName(f)} / ${SOURCES[f][0]})`
  const need = (field: keyof Config, other: keyof Config, why: string) => {
    if (config[field] !== undefined && config[other] === undefined) {
      throw new SluiceError('CONFIG_INVALID', `${setting(other)}: required with ${setting(field)}: ${why}`)
    }
  }
  need('kafkaSaslMechanism', 'kafkaUsername', 'SASL signs in with a user name')
  need('kafkaSaslMechanism', 'kafkaPassword', 'SASL signs in with a password')
  need('kafkaUsername', 'kafkaSaslMechanism', 'say which SASL mechanism the brokers take')
  need('kafkaCertFile', 'kafkaKeyFile', 'a client certificate needs its private key')
  need('kafkaKeyFile', 'kafkaCertFile', 'a private key needs its client certificate')
  need('clickhousePassword', 'clickhouseUser', 'the password belongs to a user')
  need('schemaRegistryPassword', 'schemaRegistryUser', 'the password belongs to a user')
  // ClickHouse's events are deleted as its operators choose (docs/clickhouse.md), not by Sluice.
  if (config.eventRetentionMs > 0 && config.kafkaBrokers.length > 0)
    throw new SluiceError(
      'CONFIG_INVALID',
      `${setting('eventRetentionMs')}: embedded mode only; in distributed mode ClickHouse keeps the events (a TTL or DROP PARTITION, docs/clickhouse.md)`,
    )
  // kafkajs has no lz4, zstd or snappy codec: refused rather than sending uncompressed.
  if (config.kafkaClient === 'kafkajs' && !['none', 'gzip'].includes(config.kafkaCompression))
    throw new SluiceError(
      'CONFIG_INVALID',
      `${setting('kafkaCompression')}: ${config.kafkaCompression} needs kafkaClient platformatic; kafkajs compresses with gzip only`,
    )
}

/** RocksDB's memory and open-file bounds (core/rocks.ts) from the config. */
export const rocksMemoryOf = (config: Config): RocksMemory => ({
  writeBufferMb: config.rocksdbWriteBufferMb,
  writeBuffers: config.rocksdbWriteBuffers,
  maxOpenFiles: config.rocksdbMaxOpenFiles,
})

/** Where the CLI's control commands find the server. */
export function apiTarget(
  flags: Flags = {},
  env: NodeJS.ProcessEnv = process.env,
): { url: string; signingKey?: string; eventKey?: string } {
  const url = (flags.url as string | undefined) ?? env.SLUICE_URL ?? `http://127.0.0.1:${env.SLUICE_PORT ?? 8288}`
  return {
    url,
    signingKey: (flags.signingKey as string | undefined) ?? env.SLUICE_SIGNING_KEY,
    eventKey: env.SERVICE_EVENT_KEY,
  }
}

const isSecret = (field: string) => (SECRET_FIELDS as readonly string[]).includes(field)
const secretFile = (field: string, flags: Flags, env: NodeJS.ProcessEnv) =>
  (flags[`${field}File`] as string | undefined) ?? env[`${SOURCES[field][0]}_FILE`]

/** A secret from a file (a mounted Secret): the content, without the trailing newline editors add. */
function readSecretFile(field: string, path: string | undefined): string | undefined {
  if (!path) return undefined
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '')
  } catch (err) {
    const where = `--${flagName(field)}-file / ${SOURCES[field][0]}_FILE`
    const code = (err as NodeJS.ErrnoException).code
    throw new SluiceError('CONFIG_INVALID', `${field} (${where}): cannot read ${path}: ${code}`)
  }
}

function bool(v: string): boolean {
  return v === 'true' || v === '1'
}

function list(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

export function kebab(field: string): string {
  return field.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())
}
