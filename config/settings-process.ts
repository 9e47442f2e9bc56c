// Settings of the process and its HTTP listener: roles, addresses, request limits, shutdown.
import { bool, int, list, listOf, text, choice } from './setting-kinds.ts'

const MiB = 1024 * 1024

export const PROCESS_SETTINGS = {
  roles: listOf(['all', 'ingest', 'transformer', 'dedup', 'router', 'sink', 'runner', 'api'], {
    env: 'SLUICE_ROLES',
    flag: 'role',
    default: ['all'],
    doc: 'Distributed: the roles this process plays; embedded, a process plays them all.',
  }),
  host: text({
    env: 'SLUICE_HOST',
    default: '127.0.0.1',
    doc: 'Address the HTTP and ops listeners bind to; 0.0.0.0 in a container.',
  }),
  port: int({
    env: 'SLUICE_PORT',
    min: 0,
    max: 65535,
    default: 8288,
    doc: 'HTTP port of the ingest and api roles and of the embedded mode.',
  }),
  dataDir: text({ env: 'SLUICE_DATA_DIR', default: '.sluice', doc: 'RocksDB directory, one process per directory.' }),
  signingKey: text({
    env: 'SLUICE_SIGNING_KEY',
    minLength: 16,
    secret: true,
    doc: 'Bearer key of the REST API; required by sluice start (sluice dev leaves the API open).',
  }),
  // Single sign-on (OpenID Connect, authorization code with PKCE: api/oidc.ts, docs/teams.md).
  oidcIssuer: text({
    env: 'SLUICE_OIDC_ISSUER',
    doc: "SSO: the OpenID Provider's issuer URL; set, the dashboard offers Sign in with SSO.",
  }),
  oidcClientId: text({ env: 'SLUICE_OIDC_CLIENT_ID', doc: "SSO: Sluice's client ID at the provider." }),
  oidcClientSecret: text({ env: 'SLUICE_OIDC_CLIENT_SECRET', secret: true, doc: "SSO: the client's secret." }),
  oidcRoleClaim: text({
    env: 'SLUICE_OIDC_ROLE_CLAIM',
    default: 'sluice_role',
    doc: 'SSO: the ID token claim giving the role, and environments: editor, or editor:staging,qa.',
  }),
  publicUrl: text({
    env: 'SLUICE_PUBLIC_URL',
    doc: "The URL browsers reach Sluice at (SSO's redirect URI is its /v1/auth/oidc/callback).",
  }),
  logLevel: choice(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    env: 'SLUICE_LOG_LEVEL',
    default: 'info',
    doc: 'The least severe log lines written.',
  }),
  trustProxy: list({
    env: 'SLUICE_TRUST_PROXY',
    default: [],
    doc: 'Proxy addresses or CIDRs whose X-Forwarded-For is believed.',
  }),
  // A slow or idle client holds a connection only so long (api/edge.ts). Keep-alive outlives the 60 s idle
  // timeout of common load balancers, so they never reuse a connection Sluice is closing (fastify's reason too).
  requestTimeoutMs: int({
    env: 'SLUICE_REQUEST_TIMEOUT_MS',
    min: 0,
    default: 30_000,
    doc: 'HTTP: the whole request must arrive within it; 0: no limit.',
  }),
  headersTimeoutMs: int({
    env: 'SLUICE_HEADERS_TIMEOUT_MS',
    min: 1,
    default: 10_000,
    doc: 'HTTP: the request headers must arrive within it.',
  }),
  keepAliveTimeoutMs: int({
    env: 'SLUICE_KEEP_ALIVE_TIMEOUT_MS',
    min: 1,
    default: 72_000,
    doc: 'HTTP: how long an idle keep-alive connection is kept.',
  }),
  socketIdleTimeoutMs: int({
    env: 'SLUICE_SOCKET_IDLE_TIMEOUT_MS',
    min: 0,
    default: 120_000,
    doc: 'HTTP: a connection with no traffic at all is closed after it; 0: never.',
  }),
  maxConnections: int({
    env: 'SLUICE_MAX_CONNECTIONS',
    min: 0,
    default: 10_000,
    doc: 'HTTP: connections past this are refused; 0: no cap.',
  }),
  // The dev server's REST API is open: a page must not reach it by a rebound DNS name.
  allowedHosts: list({
    env: 'SLUICE_ALLOWED_HOSTS',
    default: [],
    doc: 'sluice dev: names it answers to besides loopback names, IP addresses and --host.',
  }),
  maxBodyBytes: int({
    env: 'SLUICE_MAX_BODY_BYTES',
    min: 1024,
    default: 512 * 1024,
    doc: 'Event API and webhook body limit; an environment may set its own.',
  }),
  maxBodyCeilingBytes: int({
    env: 'SLUICE_MAX_BODY_CEILING_BYTES',
    min: 1024,
    default: 64 * MiB,
    doc: "The highest an environment's own body limit may be.",
  }),
  maxEvents: int({ env: 'SLUICE_MAX_EVENTS', min: 1, default: 5000, doc: 'Events in one Event API request.' }),
  maxEventsPerSecond: int({
    env: 'SLUICE_MAX_EVENTS_PER_SECOND',
    min: 0,
    default: 0,
    doc: 'Event API events per second per environment and ingest process; 0: no limit.',
  }),
  maxJsonDepth: int({
    env: 'SLUICE_MAX_JSON_DEPTH',
    min: 2,
    max: 1000,
    default: 64,
    doc: 'Deepest nesting of a request body.',
  }),
  maxNameLength: int({ env: 'SLUICE_MAX_NAME_LENGTH', min: 1, default: 256, doc: 'Longest event name.' }),
  maxIdLength: int({ env: 'SLUICE_MAX_ID_LENGTH', min: 1, default: 512, doc: 'Longest event id (the dedup key).' }),
  // sluice dev answers them on `port` (one port for a Dev Server).
  opsPort: int({
    env: 'SLUICE_OPS_PORT',
    min: 0,
    max: 65535,
    default: 8289,
    doc: 'Port of /healthz, /readyz and /metrics of sluice start and sluice runner, whatever the roles.',
  }),
  // The HTTP port of ingest is public; metrics name environments and functions, so they stay off it.
  metricsListener: choice(['ops', 'http', 'http-signed'], {
    env: 'SLUICE_METRICS_LISTENER',
    default: 'ops',
    doc: '/metrics on the ops port, or on the HTTP port too: open (http) or with the signing key (http-signed).',
  }),
  // Below Kubernetes' default terminationGracePeriodSeconds (30 s), so the process exits before it is killed.
  shutdownGraceMs: int({
    env: 'SLUICE_SHUTDOWN_GRACE_MS',
    min: 1000,
    max: 600_000,
    default: 25_000,
    doc: 'SIGTERM: the time to drain and exit in.',
  }),
  // So load balancers stop sending before the listener closes.
  shutdownDelayMs: int({
    env: 'SLUICE_SHUTDOWN_DELAY_MS',
    min: 0,
    max: 60_000,
    default: 0,
    doc: 'SIGTERM: /readyz answers 503 this long before the listener closes.',
  }),
  heapGrowingPercent: int({
    env: 'SLUICE_HEAP_GROWING_PERCENT',
    min: 0,
    max: 1000,
    default: 0,
    doc: "V8's old generation grows to 1 + this/100 times what was live at the last full collection; 0: V8's own.",
  }),
  functionsFile: text({
    env: 'SLUICE_FUNCTIONS',
    flag: 'functions',
    doc: 'Module that exports the functions to serve (sluice dev, sluice runner).',
  }),
  watch: bool({ env: 'SLUICE_WATCH', default: false, doc: 'Reload the functions module when it changes.' }),
  appUrls: list({
    env: 'SLUICE_APP_URLS',
    flag: 'sdk-url',
    default: [],
    doc: 'Apps on the Inngest SDKs to sync at start (`sluice dev -u URL`, repeatable), retried until they answer.',
  }),
  appHosts: list({
    env: 'SLUICE_APP_HOSTS',
    default: [],
    doc: 'Hosts (`host` or `host:port`) apps may be synced from; empty allows any.',
  }),
  appConnectTimeoutMs: int({
    env: 'SLUICE_APP_CONNECT_TIMEOUT_MS',
    min: 100,
    max: 60_000,
    default: 10_000,
    doc: "How long a call to an app may take to connect; the answer may take the function's timeout.",
  }),
  appMaxResponseBytes: int({
    env: 'SLUICE_APP_MAX_RESPONSE_BYTES',
    min: 1024,
    max: 64 * 1024 * 1024,
    default: 4 * 1024 * 1024,
    doc: "The largest answer of an app's call (a step's output with it); larger fails the call.",
  }),
}
