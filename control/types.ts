import type { FlowControl } from '../core/flow.ts'

// Control-plane documents and the store that holds them. Every node keeps the whole
// control plane in memory (it is small), so reads are synchronous: ingest authenticates
// without a round trip. Writes go through the adapter (RocksDB, or a compacted Kafka topic).

export interface EnvDoc {
  name: string
  kind: 'standard' | 'branch'
  createdAt: number
  archivedAt?: number
  /** Event API / webhook body limit for this environment; the server default when absent. */
  maxBodyBytes?: number
  /** Event API rate limit (events per second, per ingest node) for this environment; the server default when absent. */
  maxEventsPerSecond?: number
  /** What a schema violation does (docs/schemas.md); `off` when absent. */
  schemaMode?: SchemaMode
  /** What an event name without a schema does; `allow` when absent. */
  unknownNames?: UnknownNames
  /** Days its events, runs and webhook requests are kept, each; the server's default where absent (control/retention.ts). */
  retentionDays?: RetentionDays
}

export interface RetentionDays {
  events?: number
  runs?: number
  requests?: number
}

export const SCHEMA_MODES = ['off', 'warn', 'block'] as const
export type SchemaMode = (typeof SCHEMA_MODES)[number]
export const UNKNOWN_NAME_MODES = ['allow', 'warn', 'block'] as const
export type UnknownNames = (typeof UNKNOWN_NAME_MODES)[number]

/** One version of an event name's JSON Schema for `data` (draft 2020-12). */
export interface SchemaVersion {
  version: number
  schema: Record<string, unknown>
  createdAt: number
}

/** An event name's schemas in one environment (or BRANCH_GROUP), oldest version first; stored as `<env>:<name>`. */
export interface SchemaDoc {
  env: string
  name: string
  versions: SchemaVersion[]
}

export interface KeyDoc {
  /** Public identifier, safe to list and show. */
  id: string
  /** sha256 of the key: the key itself is shown once at creation and never stored. */
  hash: string
  /** A standard environment's name, or BRANCH_GROUP. */
  env: string
  /** The key's first characters, so a person can tell keys apart. */
  prefix: string
  createdAt: number
  revokedAt?: number
}

/** An API token (control/tokens.ts), stored by its sha256: the token is shown once at creation. */
export interface TokenDoc {
  id: string
  hash: string
  name: string
  role: 'viewer' | 'editor' | 'admin'
  /** The environments it may act in; none: every one. */
  envs?: string[]
  prefix: string
  createdAt: number
  expiresAt?: number
}

/** A person (control/users.ts): signs in with a password (argon2id hash) or through SSO. */
export interface UserDoc {
  id: string
  /** Lowercased. */
  email: string
  role: 'viewer' | 'editor' | 'admin'
  /** The environments they may act in; none: every one. */
  envs?: string[]
  passwordHash?: string
  /** The OpenID Provider and subject a single sign-on user came from. */
  sso?: { issuer: string; subject: string }
  createdAt: number
}

/** A signed-in user's session, stored by the sha256 of the cookie's value. */
export interface SessionDoc {
  id: string
  userId: string
  /** Sent back in `x-csrf-token` by every state-changing request made with the cookie. */
  csrf: string
  createdAt: number
  expiresAt: number
}

/** A single sign-on under way (api/oidc.ts): by the sha256 of its `state`, for ten minutes, used once. */
export interface OidcLoginDoc {
  id: string
  /** The PKCE code verifier and the nonce the ID token must carry. */
  verifier: string
  nonce: string
  expiresAt: number
}

/** When a token was last used, to the minute: a document of its own, so that a use never brings back a deleted token. */
export interface TokenUseDoc {
  id: string
  at: number
}

export const VERIFICATION_PRESETS = [
  'stripe',
  'github',
  'slack',
  'shopify',
  'hmac-sha256',
  'standard-webhooks',
  'twilio',
  'linear',
  'paddle',
  'square',
  'intercom',
  'zendesk',
] as const
export type VerificationPreset = (typeof VERIFICATION_PRESETS)[number]

/** Built-in signature check on the raw body, before the transform runs. Secrets are write-only. */
export interface WebhookVerification {
  preset: VerificationPreset
  secret: string
  /** Key rotation: the secret being replaced, accepted too until it is removed. */
  previousSecret?: string
  /** `hmac-sha256` only: the header carrying the signature (default `X-Signature`). */
  header?: string
  /** Presets that sign the URL they called (twilio, square): that URL, without its query string. */
  publicUrl?: string
  /** Presets with a signed timestamp: how far it may be from the receive time (default 300). */
  toleranceSeconds?: number
}

export interface WebhookDoc {
  /** `wh_` + 32 random bytes, base64url: unguessable, and distinct from event keys (`sk_…`). */
  id: string
  name: string
  /** A standard environment's name, or BRANCH_GROUP. */
  env: string
  /** Source of `transform(evt, headers, queryParams, raw)`; absent → the documented default. */
  transform?: string
  /** Bumped whenever `transform` changes: the sandbox compiles once per version. */
  transformVersion: number
  /** CIDR blocks (IPv4/IPv6); empty allow list = any source. Deny wins. */
  allowIps: string[]
  denyIps: string[]
  /** Event name patterns with `*` wildcards, applied to the transform's output. */
  allowEvents: string[]
  denyEvents: string[]
  verification?: WebhookVerification
  /**
   * Where the provider's delivery ID is read (the dedup key of events the transform gives no `id`):
   * absent → the preset's default, a header name, or `none`.
   */
  deliveryId?: string
  disabled: boolean
  createdAt: number
  updatedAt: number
}

/**
 * A webhook paused from the REST API (transformer/ARCHITECTURE.md, "Pausing"). Written by the api
 * only; `seq` counts its pauses and resumes. While paused, or until the transformer has passed the
 * marker of the latest resume (its WebhookReleaseDoc has caught up with `seq`), the webhook's
 * requests are held in the request store.
 */
export interface WebhookPauseDoc {
  /** The webhook's ID. */
  id: string
  paused: boolean
  pausedAt: number
  resumedAt?: number
  seq: number
}

/** Written by the transformer only: the `seq` of the last resume whose held requests it released. */
export interface WebhookReleaseDoc {
  id: string
  seq: number
  releasedAt: number
}

/** A function registered by a runner, in one environment. */
export interface FunctionDoc {
  /** `<env>/<key>`: the same function may be served in several environments. */
  id: string
  env: string
  /** `<app id>-<function id>`: names its topic and its runs. */
  key: string
  appId: string
  functionId: string
  name: string
  /** An event name (or a `prefix/*`) with an optional CEL filter, or a cron schedule. */
  triggers: Array<{ event: string; if?: string } | { cron: string }>
  /** Events that end a run (`match`: a field path; `if`: CEL; `timeoutMs` after the run was queued). */
  cancelOn?: Array<{ event: string; match?: string; if?: string; timeoutMs?: number }>
  /** Concurrency, throttle, rate limit, debounce, batching, priority, idempotency, singleton (core/flow.ts). */
  flow?: FlowControl
  retries: number
  /** Absent on registrations from before timeouts existed. */
  timeoutMs?: number
  /** Where its code runs: absent for a runner's own functions; an app's URL for apps on Inngest's SDKs (sdk/). */
  runtime?: { kind: 'http'; url: string }
  registeredAt: number
}

/** An app served with Inngest's SDKs (sdk/apps.ts), stored as `<env>/<app id>`. */
export interface AppDoc {
  id: string
  env: string
  appId: string
  url: string
  sdk: { language: string; version: string }
  framework?: string
  /** Its functions' keys (`<app id>-<function id>`), registered in the function registry. */
  functions: string[]
  /** How the last sync came: answered to Sluice's PUT (in band), or posted to /fn/register. */
  syncKind?: 'in_band' | 'out_of_band'
  syncedAt: number
  /** The last sync's failure, until a sync succeeds. */
  error?: { code: string; message: string; at: number }
}

/**
 * A function paused from the REST API: its new runs are held by its runner, durably, until it is
 * resumed; then they run in order, or are skipped when `skipHeld`. Kept after a resume (what to do
 * with what was held), replaced by the next pause.
 */
export interface PauseDoc {
  /** `<env>/<key>`, as the function's registration. */
  id: string
  env: string
  key: string
  paused: boolean
  pausedAt: number
  resumedAt?: number
  /** On resume: the runs held while paused end as skipped instead of running. */
  skipHeld?: boolean
}

/** Which runs a bulk action touches (all given fields must match). */
export interface RunFilter {
  function?: string
  env?: string
  status?: string
  eventName?: string
  /** Queue time bounds, epoch milliseconds (exclusive). */
  queuedAfter?: number
  queuedBefore?: number
}

/** A bulk cancel or replay, worked through in the background by the api role (api/bulk-worker.ts). */
export interface BulkJobDoc {
  id: string
  action: 'cancel' | 'replay'
  /** Replay: `new` starts new runs of the same events; `retry` continues failed runs from their last step. */
  mode?: 'new' | 'retry'
  filter: RunFilter
  status: 'running' | 'done' | 'failed'
  /** Runs read so far, runs that matched the filter, runs acted on, runs skipped (ended, not failed, …). */
  scanned: number
  matched: number
  done: number
  skipped: number
  /** Where the next page of runs starts. */
  cursor: string | null
  error?: string
  createdAt: number
  updatedAt: number
  /** The process working on it until then (one at a time). */
  lease?: { owner: string; until: number }
}

/**
 * An erasure (api/erasure-worker.ts, docs/privacy.md): the events of `env` whose data holds
 * `value` at `path`, their runs and the requests they came from. The value is dropped once the job
 * ends (a fingerprint stays), so the control plane does not keep what was erased.
 */
export interface ErasureDoc {
  id: string
  env: string
  /** `data.user.id` */
  path: string
  value?: string | number | boolean
  valueFingerprint: string
  status: 'running' | 'done' | 'failed'
  /** Deleted so far, per kind. */
  counts: { events: number; runs: number; requests: number }
  /** Where the next page of the env's events starts; null before the first. */
  cursor: string | null
  /** The scan has read the env's last page. */
  scanned: boolean
  /** Found and not yet recorded as deleted: deleted again after a restart (deleting is idempotent). */
  pending?: { events: string[]; runs: string[]; requests: Array<{ webhookId: string; requestId: string }> }
  /** Failed steps in a row (the job fails after a few). */
  failures: number
  error?: string
  createdAt: number
  updatedAt: number
  /** The process working on it until then (one at a time). */
  lease?: { owner: string; until: number }
}

/** What an alert rule measures (control/alerts.ts): per webhook, or per function. */
export const ALERT_METRICS = {
  webhook: ['failed_requests', 'failure_rate', 'held_requests'],
  function: ['failed_runs', 'failure_rate'],
} as const
export type AlertTargetKind = keyof typeof ALERT_METRICS
export type AlertMetric = (typeof ALERT_METRICS)[AlertTargetKind][number]

/** An alert rule: fires when `metric` over the last `windowMs` is above `threshold`, resolves when it is not. */
export interface AlertRuleDoc {
  /** `al_` + random. */
  id: string
  name: string
  /** A webhook's ID, or a function's `<env>/<key>`. */
  target: { kind: AlertTargetKind; id: string }
  /** The environment its `sluice/alert.*` events go to. */
  env: string
  metric: AlertMetric
  threshold: number
  windowMs: number
  /** Where notifications are posted, signed with Standard Webhooks using `secret` (whsec_…, shown once). */
  endpoint: string
  secret: string
  createdAt: number
}

/** One firing of a rule, open until the rule's condition is false again; the newest few per rule are kept. */
export interface AlertIncidentDoc {
  /** A ULID: incidents sort by when they opened. */
  id: string
  ruleId: string
  status: 'open' | 'resolved'
  openedAt: number
  resolvedAt?: number
  /** The measured value when it opened, and the latest one. */
  openedValue: number
  value: number
  /** Delivery of the latest notification: failures are kept and shown, never block anything. */
  notification: {
    event: 'fired' | 'resolved'
    status: 'pending' | 'delivered' | 'failed'
    attempts: number
    error?: string
  }
}

/** The single alert evaluator among api processes (api/alert-evaluator.ts). */
export interface AlertLeaseDoc {
  id: string
  owner: string
  until: number
}

export interface ControlDocs {
  env: EnvDoc
  /** The branch group's own modes (stored as `branch`), which its environments use until they set theirs. */
  envGroup: EnvDoc
  /** Stored under the key's hash. */
  key: KeyDoc
  webhook: WebhookDoc
  function: FunctionDoc
  pause: PauseDoc
  job: BulkJobDoc
  erasure: ErasureDoc
  webhookPause: WebhookPauseDoc
  webhookRelease: WebhookReleaseDoc
  alertRule: AlertRuleDoc
  alertIncident: AlertIncidentDoc
  alertLease: AlertLeaseDoc
  token: TokenDoc
  tokenUse: TokenUseDoc
  user: UserDoc
  session: SessionDoc
  oidcLogin: OidcLoginDoc
  app: AppDoc
  schema: SchemaDoc
}

export type ControlKind = keyof ControlDocs

export interface ControlStore {
  get<K extends ControlKind>(kind: K, id: string): ControlDocs[K] | undefined
  list<K extends ControlKind>(kind: K): Array<ControlDocs[K]>
  /** Resolves once durable (and, in distributed mode, visible to this node). */
  put<K extends ControlKind>(kind: K, id: string, doc: ControlDocs[K]): Promise<void>
  /**
   * Compare-and-set: puts `doc` only if the document is still `expected` (the object `get` answered,
   * or undefined for none) once the write is ordered among every node's writes; answers false, and
   * changes nothing, when another write came first. Resolves as `put` does.
   */
  putIf<K extends ControlKind>(
    kind: K,
    id: string,
    doc: ControlDocs[K],
    expected: ControlDocs[K] | undefined,
  ): Promise<boolean>
  delete(kind: ControlKind, id: string): Promise<void>
  close(): Promise<void>
}
