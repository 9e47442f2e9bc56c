// The only module that reads process.env. Flags win over env vars, env vars over defaults;
// one TypeBox schema validates the result, which is frozen and handed out in slices.
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { SluiceError } from '../core/errors.ts'

const Int = (min: number, max = Number.MAX_SAFE_INTEGER) => Type.Integer({ minimum: min, maximum: max })

export const ConfigSchema = Type.Object({
  mode: Type.Union([Type.Literal('dev'), Type.Literal('start')]),
  roles: Type.Array(Type.Union(['all', 'ingest', 'transformer', 'dedup', 'router', 'sink', 'runner', 'api'].map((r) => Type.Literal(r)))),
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
  topicPrefix: Type.String({ pattern: '^[a-zA-Z0-9._-]+$' }),
  kafkaBrokers: Type.Array(Type.String({ minLength: 1 })),
  clickhouseUrl: Type.Optional(Type.String({ minLength: 1 })),
  clickhouseDatabase: Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' }),
  schemaRegistryUrl: Type.Optional(Type.String({ minLength: 1 })),
  functionsFile: Type.Optional(Type.String({ minLength: 1 })),
  watch: Type.Boolean(),
  transformCpuTimeMs: Int(1, 60_000),
  transformWallTimeMs: Int(1, 300_000),
  transformIsolateMemoryMb: Int(8, 4096),
  transformMaxOutputBytes: Int(1024),
  transformIsolates: Int(1, 256),
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
const SOURCES: Record<string, [string, (v: string) => unknown]> = {
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
  topicPrefix: ['SLUICE_TOPIC_PREFIX', String],
  kafkaBrokers: ['SLUICE_KAFKA_BROKERS', list],
  clickhouseUrl: ['SLUICE_CLICKHOUSE_URL', String],
  clickhouseDatabase: ['SLUICE_CLICKHOUSE_DATABASE', String],
  schemaRegistryUrl: ['SLUICE_SCHEMA_REGISTRY_URL', String],
  functionsFile: ['SLUICE_FUNCTIONS', String],
  watch: ['SLUICE_WATCH', (v) => v === 'true' || v === '1'],
  transformCpuTimeMs: ['SLUICE_TRANSFORM_CPU_TIME_MS', Number],
  transformWallTimeMs: ['SLUICE_TRANSFORM_WALL_TIME_MS', Number],
  transformIsolateMemoryMb: ['SLUICE_TRANSFORM_ISOLATE_MEMORY_MB', Number],
  transformMaxOutputBytes: ['SLUICE_TRANSFORM_MAX_OUTPUT_BYTES', Number],
  transformIsolates: ['SLUICE_TRANSFORM_ISOLATES', Number],
  requestTimeoutMs: ['SLUICE_REQUEST_TIMEOUT_MS', Number],
  headersTimeoutMs: ['SLUICE_HEADERS_TIMEOUT_MS', Number],
  keepAliveTimeoutMs: ['SLUICE_KEEP_ALIVE_TIMEOUT_MS', Number],
  socketIdleTimeoutMs: ['SLUICE_SOCKET_IDLE_TIMEOUT_MS', Number],
  maxConnections: ['SLUICE_MAX_CONNECTIONS', Number],
  allowedHosts: ['SLUICE_ALLOWED_HOSTS', list],
}

const DEFAULTS = {
  roles: ['all'], host: '127.0.0.1', port: 8288, dataDir: '.sluice', logLevel: 'info', trustProxy: [],
  maxBodyBytes: 512 * 1024, maxBodyCeilingBytes: 64 * 1024 * 1024, maxEvents: 5000, maxEventsPerSecond: 0, maxJsonDepth: 64, maxNameLength: 256, maxIdLength: 512,
  partitions: 4, dedupWindowMs: 24 * 60 * 60 * 1000, topicPrefix: 'sluice', kafkaBrokers: [], clickhouseDatabase: 'sluice', watch: false,
  transformCpuTimeMs: 100, transformWallTimeMs: 1000, transformIsolateMemoryMb: 32, transformMaxOutputBytes: 1024 * 1024, transformIsolates: 2,
  // Keep-alive outlives the 60 s idle timeout of common load balancers, so they never reuse a
  // connection Sluice is closing (fastify's default, for the same reason).
  requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 72_000, socketIdleTimeoutMs: 120_000,
  maxConnections: 10_000, allowedHosts: [],
}

export function loadConfig(mode: 'dev' | 'start', flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = { ...DEFAULTS, mode }
  for (const [field, [envVar, parse]] of Object.entries(SOURCES)) {
    const flag = flags[field]
    if (flag !== undefined) raw[field] = typeof flag === 'boolean' ? flag : parse(flag)
    else if (env[envVar] !== undefined && env[envVar] !== '') raw[field] = parse(env[envVar]!)
  }
  if (!Value.Check(ConfigSchema, raw)) {
    const first = Value.Errors(ConfigSchema, raw).First()!
    const field = first.path.slice(1).split('/')[0]
    const hint = SOURCES[field] ? ` (--${kebab(field)} / ${SOURCES[field][0]})` : ''
    throw new SluiceError('CONFIG_INVALID', `${field}${hint}: ${first.message}`)
  }
  const config = raw as Config
  if (mode === 'start' && !config.signingKey) throw new SluiceError('CONFIG_INVALID', 'signingKey (--signing-key / SLUICE_SIGNING_KEY): required by sluice start (at least 16 characters)')
  return Object.freeze(config)
}

/** Where the CLI's control commands find the server. */
export function apiTarget(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): { url: string; signingKey?: string; eventKey?: string } {
  const url = (flags.url as string | undefined) ?? env.SLUICE_URL ?? `http://127.0.0.1:${env.SLUICE_PORT ?? 8288}`
  return { url, signingKey: (flags.signingKey as string | undefined) ?? env.SLUICE_SIGNING_KEY, eventKey: env.SERVICE_EVENT_KEY }
}

function list(v: string): string[] {
  return v.split(',').map((s) => s.trim()).filter(Boolean)
}

export function kebab(field: string): string {
  return field.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())
}
