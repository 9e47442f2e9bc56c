// The one error catalogue. HTTP bodies carry `code`; docs/errors.md lists every code
// with how to solve it, and tests/errors.test.ts keeps the two in step. A code without a
// `statusCode` is never an HTTP answer: it is recorded on a run or raised by the client library.
export interface ErrorSpec {
  statusCode?: number
  retriable: boolean
  message: string
}

export const errorCatalogue = {
  EVENT_INVALID: { statusCode: 400, retriable: false, message: 'An event in the request is not valid' },
  JSON_INVALID: { statusCode: 400, retriable: false, message: 'The request body is not valid JSON' },
  JSON_TOO_DEEP: { statusCode: 400, retriable: false, message: 'The request body nests deeper than the limit' },
  TOO_MANY_EVENTS: { statusCode: 400, retriable: false, message: 'The request holds more events than the limit' },
  ENV_REQUIRED: {
    statusCode: 400,
    retriable: false,
    message: 'A branch environment key needs the x-service-env header',
  },
  EVENT_SCHEMA_VIOLATION: {
    statusCode: 400,
    retriable: false,
    message: "An event's data breaks its name's schema, or the name has none, in an environment that blocks",
  },
  SCHEMA_INVALID: { statusCode: 400, retriable: false, message: 'The schema is not a JSON Schema Sluice accepts' },
  SCHEMA_BREAKING_CHANGE: {
    statusCode: 400,
    retriable: false,
    message: 'The new schema version would refuse events the previous one accepted',
  },
  SCHEMA_VERSION_CONFLICT: {
    statusCode: 409,
    retriable: true,
    message: 'Concurrent pushes of the same event name kept this one from being stored',
  },
  SCHEMA_NO_SAMPLES: {
    statusCode: 404,
    retriable: false,
    message: 'No stored events of that name to draft a schema from',
  },
  ID_SEED_INVALID: { statusCode: 400, retriable: false, message: 'The x-service-event-id-seed header is not valid' },
  REQUEST_INVALID: { statusCode: 400, retriable: false, message: 'A request parameter is not valid' },
  VERIFICATION_INVALID: {
    statusCode: 400,
    retriable: false,
    message: "A webhook's signature check settings are not valid for its preset",
  },
  ALERT_RULE_INVALID: {
    statusCode: 400,
    retriable: false,
    message: 'The alert rule is invalid: the message names the field',
  },
  KEY_INVALID: { statusCode: 401, retriable: false, message: 'The event key is unknown or revoked' },
  UNAUTHORIZED: { statusCode: 401, retriable: false, message: 'The signing key or API token is missing or wrong' },
  FORBIDDEN: {
    statusCode: 403,
    retriable: false,
    message: "The caller's role or environments do not hold the permission",
  },
  IP_DENIED: { statusCode: 403, retriable: false, message: 'The source IP address is not allowed for this webhook' },
  WEBHOOK_DISABLED: { statusCode: 403, retriable: false, message: 'The webhook is disabled' },
  ENV_NOT_FOUND: { statusCode: 404, retriable: false, message: 'The environment does not exist' },
  NOT_FOUND: { statusCode: 404, retriable: false, message: 'The resource does not exist' },
  CONFLICT: { statusCode: 409, retriable: false, message: 'The resource already exists' },
  QUERY_TOO_COSTLY: {
    statusCode: 422,
    retriable: false,
    message: 'The query would read more rows or run longer than the store allows',
  },
  // Insights (api/insights.ts): the SQL console of distributed mode.
  SQL_INVALID: { statusCode: 400, retriable: false, message: 'ClickHouse refused the Insights query' },
  SQL_UNAVAILABLE: {
    statusCode: 404,
    retriable: false,
    message: 'Insights SQL needs ClickHouse (distributed mode) and the api role',
  },
  BACKUP_UNSUPPORTED: {
    statusCode: 409,
    retriable: false,
    message: 'Backups are of an embedded server; a distributed one keeps its state in Kafka and ClickHouse',
  },
  RUN_NOT_RETRIABLE: { statusCode: 409, retriable: false, message: 'Only a failed run can be retried' },
  RUN_NOT_CANCELLABLE: {
    statusCode: 409,
    retriable: false,
    message: 'Only a run that has not ended can be cancelled',
  },
  FUNCTION_NOT_PAUSED: { statusCode: 409, retriable: false, message: 'Only a paused function can be resumed' },
  WEBHOOK_NOT_PAUSED: { statusCode: 409, retriable: false, message: 'Only a paused webhook can be resumed' },
  BODY_TOO_LARGE: { statusCode: 413, retriable: false, message: 'The request body is over the limit' },
  RATE_LIMITED: {
    statusCode: 429,
    retriable: true,
    message: "The environment's event rate limit is reached; retry after Retry-After seconds",
  },
  LOG_UNAVAILABLE: { statusCode: 503, retriable: true, message: 'The event log cannot take records right now' },
  PIPELINE_BEHIND: {
    statusCode: 503,
    retriable: true,
    message: 'The stages after ingest are behind; retry after Retry-After seconds',
  },
  // The HTTP edge: requests refused before they reach a route (api/edge.ts, api/fastify-errors.ts).
  REQUEST_TIMEOUT: { statusCode: 408, retriable: true, message: 'The request did not arrive within the time limit' },
  URL_TOO_LONG: { statusCode: 414, retriable: false, message: 'A path segment of the URL is over the limit' },
  CONTENT_TYPE_UNSUPPORTED: {
    statusCode: 415,
    retriable: false,
    message: 'The Content-Type is not one this route reads',
  },
  EXPECTATION_FAILED: {
    statusCode: 417,
    retriable: false,
    message: 'The Expect header asks for something other than 100-continue',
  },
  HEADERS_TOO_LARGE: { statusCode: 431, retriable: false, message: 'The request headers are over the limit' },
  HOST_NOT_ALLOWED: {
    statusCode: 403,
    retriable: false,
    message: 'The Host header names a host the dev server does not answer to',
  },
  SERVER_CLOSING: { statusCode: 503, retriable: true, message: 'The server is shutting down' },
  INTERNAL: { statusCode: 500, retriable: true, message: 'Internal error' },
  LOGIN_FAILED: { statusCode: 401, retriable: false, message: 'No user signs in with this email and password' },
  LOGIN_THROTTLED: {
    statusCode: 429,
    retriable: true,
    message: 'Too many failed sign-ins for this account or address; retry after Retry-After seconds',
  },
  SSO_FAILED: {
    statusCode: 401,
    retriable: false,
    message: 'Single sign-on did not complete: the provider refused it, or its answer could not be checked',
  },
  SSO_ROLE_MISSING: {
    statusCode: 403,
    retriable: false,
    message: "The provider's ID token gives no role Sluice knows (the role claim, SLUICE_OIDC_ROLE_CLAIM)",
  },
  CSRF_TOKEN_INVALID: {
    statusCode: 403,
    retriable: false,
    message: "A change made with the session cookie lacks the session's CSRF token (x-csrf-token)",
  },
  FLOW_ENV_LIMIT_UNROUTED: {
    statusCode: 400,
    retriable: false,
    message: "A function's env-scoped concurrency limit could not hold across runners",
  },
  CONFIG_INVALID: { statusCode: 500, retriable: false, message: 'The configuration is not valid' },
  // Startup: a server (Kafka, ClickHouse, schema registry) refused the configured login or was not trusted.
  CREDENTIALS_REJECTED: { statusCode: 500, retriable: false, message: 'A server refused the configured credentials' },
  CERTIFICATE_UNTRUSTED: { statusCode: 500, retriable: false, message: "A server's TLS certificate is not trusted" },
  // Startup: the schema registry refused Sluice's Avro schema, or could not be reached (bus/schema-registry.ts).
  SCHEMA_INCOMPATIBLE: {
    statusCode: 500,
    retriable: false,
    message: "The schema registry refused Sluice's Avro schema as incompatible with the subject's",
  },
  SCHEMA_REGISTRY_UNAVAILABLE: { statusCode: 503, retriable: true, message: 'The schema registry cannot be reached' },
  // Webhook dead-letter reasons: recorded on the request (GET /v1/webhooks/<id>/requests?status=failed), not sent to the sender.
  SIGNATURE_INVALID: {
    statusCode: 422,
    retriable: false,
    message: 'The webhook request signature is missing or does not match',
  },
  TRANSFORM_INVALID_EVENT: {
    statusCode: 422,
    retriable: false,
    message: 'The webhook transform returned something that is not a valid event',
  },
  EVENT_NAME_DENIED: {
    statusCode: 422,
    retriable: false,
    message: "The event name is refused by the webhook's allow/deny lists",
  },
  // The sandbox's outcomes (transformer/sandbox-types.ts), recorded the same way.
  TRANSFORM_COMPILE: { statusCode: 422, retriable: false, message: 'The webhook transform does not compile' },
  TRANSFORM_NOT_A_FUNCTION: {
    statusCode: 422,
    retriable: false,
    message: 'The webhook transform source defines no function transform',
  },
  TRANSFORM_THREW: { statusCode: 422, retriable: false, message: 'The webhook transform threw' },
  TRANSFORM_TIMEOUT: { statusCode: 422, retriable: false, message: 'The webhook transform ran over its time limit' },
  TRANSFORM_MEMORY: { statusCode: 422, retriable: false, message: 'The webhook transform ran over its memory limit' },
  TRANSFORM_OUTPUT_TOO_LARGE: {
    statusCode: 422,
    retriable: false,
    message: 'The webhook transform returned more than the output limit',
  },
  // Recorded on function runs (GET /v1/runs): raised in the user's process by the client library.
  FUNCTION_TIMEOUT: { retriable: true, message: "An attempt of the function ran over the function's timeoutMs" },
  NON_RETRIABLE: { retriable: false, message: 'The function threw NonRetriableError: the run fails without retries' },
  // Apps served with Inngest's SDKs (sdk/): the sync answers these over HTTP, runs record the rest.
  SDK_SYNC_INVALID: { statusCode: 400, retriable: false, message: "The app's sync is not a valid registration" },
  SDK_SYNC_FAILED: {
    statusCode: 502,
    retriable: true,
    message: 'The app did not answer the sync as an Inngest SDK does',
  },
  SDK_VERSION_REFUSED: { statusCode: 400, retriable: false, message: "The app's SDK version is refused" },
  SDK_HOST_REFUSED: { statusCode: 400, retriable: false, message: "The app's host is not in the allowed list" },
  SDK_UNREACHABLE: { retriable: true, message: 'The app could not be reached' },
  SDK_TIMEOUT: { retriable: true, message: 'The app did not answer in time' },
  SDK_RESPONSE_TOO_LARGE: { retriable: true, message: "The app's answer is over the size limit" },
  SDK_RESPONSE_INVALID: { retriable: true, message: "The app's answer is not one of the SDK protocol's" },
  SDK_SIGNATURE_INVALID: { retriable: true, message: "The app's answer is not signed with the signing key" },
  SDK_FUNCTION_GONE: { retriable: true, message: 'The app no longer serves the function' },
  // The client library's code for an error answer that carries no Sluice code (a proxy's error page).
  UNKNOWN: { retriable: false, message: 'An error answer without a Sluice code; its HTTP status decides a retry' },
  // The transformer's circuit breaker (transformer/breaker.ts): the request was kept, not run.
  TRANSFORM_PAUSED: {
    statusCode: 422,
    retriable: true,
    message: 'The webhook transform is paused after repeatedly hitting its limits',
  },
} as const satisfies Record<string, ErrorSpec>

type Catalogue = typeof errorCatalogue
/** Every code of the catalogue. */
export type CatalogueCode = keyof Catalogue
/** The codes Sluice answers HTTP requests with (a SluiceError's). */
export type ErrorCode = { [K in CatalogueCode]: Catalogue[K] extends { statusCode: number } ? K : never }[CatalogueCode]

export const HTTP_ERROR_CODES = (Object.keys(errorCatalogue) as CatalogueCode[]).filter(
  (code): code is ErrorCode => 'statusCode' in errorCatalogue[code],
)

/** The sandbox's outcomes (transformer/sandbox-types.ts), listed once. */
export const SANDBOX_ERROR_CODES = [
  'TRANSFORM_COMPILE',
  'TRANSFORM_NOT_A_FUNCTION',
  'TRANSFORM_THREW',
  'TRANSFORM_TIMEOUT',
  'TRANSFORM_MEMORY',
  'TRANSFORM_OUTPUT_TOO_LARGE',
] as const satisfies readonly ErrorCode[]
export type SandboxErrorCode = (typeof SANDBOX_ERROR_CODES)[number]

export class SluiceError extends Error {
  readonly code: ErrorCode
  readonly statusCode: number
  readonly retriable: boolean
  constructor(code: ErrorCode, message?: string, options?: { cause?: unknown }) {
    super(message ?? errorCatalogue[code].message, options)
    this.name = 'SluiceError'
    this.code = code
    this.statusCode = errorCatalogue[code].statusCode
    this.retriable = errorCatalogue[code].retriable
  }
  toBody(): { status: number; code: ErrorCode; error: string } {
    return { status: this.statusCode, code: this.code, error: this.message }
  }
}

/** Classify by code, never by instanceof: errors cross sandbox and process boundaries. */
export function errorCode(err: unknown): ErrorCode | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && (HTTP_ERROR_CODES as string[]).includes(code) ? (code as ErrorCode) : undefined
}
