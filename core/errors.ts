// The one error catalogue. HTTP bodies carry `code`; docs/errors.md lists every code
// with how to solve it, and tests/errors.test.ts keeps the two in step.
export interface ErrorSpec { statusCode: number; retriable: boolean; message: string }

export const errorCatalogue = {
  EVENT_INVALID: { statusCode: 400, retriable: false, message: 'An event in the request is not valid' },
  JSON_INVALID: { statusCode: 400, retriable: false, message: 'The request body is not valid JSON' },
  JSON_TOO_DEEP: { statusCode: 400, retriable: false, message: 'The request body nests deeper than the limit' },
  TOO_MANY_EVENTS: { statusCode: 400, retriable: false, message: 'The request holds more events than the limit' },
  ENV_REQUIRED: { statusCode: 400, retriable: false, message: 'A branch environment key needs the x-service-env header' },
  ID_SEED_INVALID: { statusCode: 400, retriable: false, message: 'The x-service-event-id-seed header is not valid' },
  REQUEST_INVALID: { statusCode: 400, retriable: false, message: 'A request parameter is not valid' },
  KEY_INVALID: { statusCode: 401, retriable: false, message: 'The event key is unknown or revoked' },
  UNAUTHORIZED: { statusCode: 401, retriable: false, message: 'The signing key is missing or wrong' },
  IP_DENIED: { statusCode: 403, retriable: false, message: 'The source IP address is not allowed for this webhook' },
  WEBHOOK_DISABLED: { statusCode: 403, retriable: false, message: 'The webhook is disabled' },
  ENV_NOT_FOUND: { statusCode: 404, retriable: false, message: 'The environment does not exist' },
  NOT_FOUND: { statusCode: 404, retriable: false, message: 'The resource does not exist' },
  CONFLICT: { statusCode: 409, retriable: false, message: 'The resource already exists' },
  BODY_TOO_LARGE: { statusCode: 413, retriable: false, message: 'The request body is over the limit' },
  RATE_LIMITED: { statusCode: 429, retriable: true, message: "The environment's event rate limit is reached; retry after Retry-After seconds" },
  LOG_UNAVAILABLE: { statusCode: 503, retriable: true, message: 'The event log cannot take records right now' },
  // The HTTP edge: requests refused before they reach a route (api/edge.ts, api/fastify-errors.ts).
  REQUEST_TIMEOUT: { statusCode: 408, retriable: true, message: 'The request did not arrive within the time limit' },
  URL_TOO_LONG: { statusCode: 414, retriable: false, message: 'A path segment of the URL is over the limit' },
  CONTENT_TYPE_UNSUPPORTED: { statusCode: 415, retriable: false, message: 'The Content-Type is not one this route reads' },
  EXPECTATION_FAILED: { statusCode: 417, retriable: false, message: 'The Expect header asks for something other than 100-continue' },
  HEADERS_TOO_LARGE: { statusCode: 431, retriable: false, message: 'The request headers are over the limit' },
  HOST_NOT_ALLOWED: { statusCode: 403, retriable: false, message: 'The Host header names a host the dev server does not answer to' },
  SERVER_CLOSING: { statusCode: 503, retriable: true, message: 'The server is shutting down' },
  INTERNAL: { statusCode: 500, retriable: true, message: 'Internal error' },
  CONFIG_INVALID: { statusCode: 500, retriable: false, message: 'The configuration is not valid' },
  // Webhook dead-letter reasons: recorded on the request (GET /v1/webhooks/<id>/requests?status=failed), not sent to the sender.
  SIGNATURE_INVALID: { statusCode: 422, retriable: false, message: 'The webhook request signature is missing or does not match' },
  TRANSFORM_INVALID_EVENT: { statusCode: 422, retriable: false, message: 'The webhook transform returned something that is not a valid event' },
  EVENT_NAME_DENIED: { statusCode: 422, retriable: false, message: "The event name is refused by the webhook's allow/deny lists" },
  // The sandbox's outcomes (transformer/sandbox-types.ts), recorded the same way.
  TRANSFORM_COMPILE: { statusCode: 422, retriable: false, message: 'The webhook transform does not compile' },
  TRANSFORM_NOT_A_FUNCTION: { statusCode: 422, retriable: false, message: 'The webhook transform source defines no function transform' },
  TRANSFORM_THREW: { statusCode: 422, retriable: false, message: 'The webhook transform threw' },
  TRANSFORM_TIMEOUT: { statusCode: 422, retriable: false, message: 'The webhook transform ran over its time limit' },
  TRANSFORM_MEMORY: { statusCode: 422, retriable: false, message: 'The webhook transform ran over its memory limit' },
  TRANSFORM_OUTPUT_TOO_LARGE: { statusCode: 422, retriable: false, message: 'The webhook transform returned more than the output limit' },
} as const satisfies Record<string, ErrorSpec>

export type ErrorCode = keyof typeof errorCatalogue

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
  return typeof code === 'string' && code in errorCatalogue ? (code as ErrorCode) : undefined
}
