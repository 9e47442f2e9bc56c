// fastify's own errors, by code, onto the catalogue. A message given here replaces fastify's,
// which would echo the request path (and so an event key or webhook ID) back to the caller.
import type { ErrorCode } from '../core/errors.ts'
import { WEBHOOK_ID_PREFIX } from '../control/webhooks.ts'

export const FASTIFY_ERRORS: Record<string, [ErrorCode, string?]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ['JSON_INVALID', 'body: not valid JSON'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['JSON_INVALID', 'body: empty, but Content-Type says JSON'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['BODY_TOO_LARGE'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [
    'CONTENT_TYPE_UNSUPPORTED',
    'content-type: send application/json (or no Content-Type)',
  ],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['REQUEST_INVALID', 'content-length: does not match the body'],
  FST_ERR_BAD_URL: ['REQUEST_INVALID', 'url: not a valid URL (check its percent-encoding)'],
  FST_ERR_MAX_PARAM_LENGTH: ['URL_TOO_LONG', 'url: a path segment is longer than 100 characters'],
}

/** `GET /v1/nope: no such route`, with what may be a key or webhook ID in the path masked. */
export function routeErrorMessage(method: string, url: string): string {
  const path = url.split('?')[0]
  const masked = path
    .split('/')
    .map((segment, i, all) => ((i === 2 && all[1] === 'e') || segment.startsWith(WEBHOOK_ID_PREFIX) ? '…' : segment))
    .join('/')
  return `${method} ${masked.slice(0, 200)}: no such route`
}
