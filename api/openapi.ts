// The OpenAPI document, built from one table of routes. tests/openapi.test.ts checks the
// table against the routes a fully wired server registers, so the two cannot drift.
const error = { $ref: '#/components/schemas/Error' }
const envelope = (data: object) => ({ type: 'object', properties: { data, metadata: { type: 'object' } }, required: ['data'] })
const anyObject = { type: 'object', additionalProperties: true }
const list = (items: object) => envelope({ type: 'array', items })

interface RouteDoc { method: 'get' | 'post' | 'patch' | 'delete'; path: string; summary: string; query?: string[]; body?: object; ok?: number; response?: object; public?: boolean }

const LIST = ['limit', 'cursor']
export const ROUTES: RouteDoc[] = [
  { method: 'post', path: '/e/{key}', summary: 'Event API: one event or an array (an event key, any key in dev); or a webhook delivery when {key} is a webhook ID', body: { oneOf: [{ $ref: '#/components/schemas/Event' }, { type: 'array', items: { $ref: '#/components/schemas/Event' }, maxItems: 5000 }] }, response: { $ref: '#/components/schemas/Accepted' }, public: true },
  { method: 'post', path: '/e', summary: 'Event API without a key (Dev Server only)', body: { $ref: '#/components/schemas/Event' }, response: { $ref: '#/components/schemas/Accepted' }, public: true },
  { method: 'get', path: '/v1/events', summary: 'Stored events, newest first', query: ['id', 'name', 'env', 'received_after', 'received_before', 'include_duplicates', ...LIST], response: list({ $ref: '#/components/schemas/StoredEvent' }) },
  { method: 'get', path: '/v1/events/{id}', summary: 'One stored event by internal ID (a duplicate carries duplicate_of)', response: envelope({ $ref: '#/components/schemas/StoredEvent' }) },
  { method: 'get', path: '/v1/events/{id}/runs', summary: 'Function runs of an event', response: list(anyObject) },
  { method: 'get', path: '/v1/events/stream', summary: 'Newly stored events as Server-Sent Events (text/event-stream)', query: ['env', 'name', 'since'], response: { type: 'string' } },
  { method: 'post', path: '/v1/events/{id}/replay', summary: 'Send a copy of a stored event as a new event, so its functions run again', ok: 202, response: envelope(anyObject) },
  { method: 'get', path: '/v1/envs', summary: 'Environments', response: list(anyObject) },
  { method: 'post', path: '/v1/envs', summary: 'Create an environment', body: { type: 'object', properties: { name: { type: 'string' }, branch: { type: 'boolean' }, max_body_bytes: { type: 'integer' }, max_events_per_second: { type: 'integer' } }, required: ['name'] }, ok: 201, response: envelope(anyObject) },
  { method: 'patch', path: '/v1/envs/{name}', summary: 'Change an environment (max_body_bytes, max_events_per_second)', body: { type: 'object', properties: { max_body_bytes: { type: 'integer' }, max_events_per_second: { type: 'integer' } } }, response: envelope(anyObject) },
  { method: 'post', path: '/v1/envs/{name}/archive', summary: 'Archive a branch environment', response: envelope(anyObject) },
  { method: 'get', path: '/v1/keys', summary: 'Event keys (never the key itself)', response: list(anyObject) },
  { method: 'post', path: '/v1/keys', summary: 'Create an event key; the response is the only time the key is shown', body: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] }, ok: 201, response: envelope(anyObject) },
  { method: 'delete', path: '/v1/keys/{id}', summary: 'Revoke an event key', response: envelope(anyObject) },
  { method: 'get', path: '/v1/webhooks', summary: 'Webhooks', query: ['env'], response: list(anyObject) },
  { method: 'post', path: '/v1/webhooks', summary: 'Create a webhook (its URL is POST /e/<id>)', body: anyObject, ok: 201, response: envelope(anyObject) },
  { method: 'get', path: '/v1/webhooks/{id}', summary: 'One webhook', response: envelope(anyObject) },
  { method: 'patch', path: '/v1/webhooks/{id}', summary: 'Change name, transform, lists, verification, disabled', body: anyObject, response: envelope(anyObject) },
  { method: 'delete', path: '/v1/webhooks/{id}', summary: 'Delete a webhook and its requests', response: envelope(anyObject) },
  { method: 'post', path: '/v1/webhooks/{id}/preview', summary: 'Run a transform on a payload without storing anything', body: anyObject, response: envelope(anyObject) },
  { method: 'get', path: '/v1/webhooks/{id}/requests', summary: 'Requests of a webhook (status=failed: the dead-letter list)', query: ['status', ...LIST], response: list(anyObject) },
  { method: 'get', path: '/v1/webhooks/{id}/requests/{rid}', summary: 'One request with its raw body and outcome', response: envelope(anyObject) },
  { method: 'post', path: '/v1/webhooks/{id}/requests/{rid}/replay', summary: 'Replay one request through the current transform', ok: 202, response: envelope(anyObject) },
  { method: 'post', path: '/v1/webhooks/{id}/requests/replay', summary: 'Replay every failed (or unrouted) request', body: { type: 'object', properties: { status: { enum: ['failed', 'unrouted'] } } }, ok: 202, response: envelope(anyObject) },
  { method: 'get', path: '/v1/functions', summary: 'Registered functions', query: ['env'], response: list(anyObject) },
  { method: 'get', path: '/v1/runs', summary: 'Function runs, newest first', query: ['function', 'status', 'event', 'env', ...LIST], response: list(anyObject) },
  { method: 'get', path: '/v1/runs/{id}', summary: 'One run with its steps', response: envelope(anyObject) },
  { method: 'post', path: '/v1/runs/{id}/cancel', summary: 'Cancel a run waiting for a retry (409 RUN_NOT_CANCELLABLE otherwise)', ok: 202, response: envelope(anyObject) },
  { method: 'post', path: '/v1/runs/{id}/retry', summary: 'Retry a failed run from its completed steps (409 RUN_NOT_RETRIABLE otherwise)', ok: 202, response: envelope(anyObject) },
  { method: 'get', path: '/v1/openapi.json', summary: 'This document', response: anyObject, public: true },
]

export function openApiDocument(version: string) {
  const paths: Record<string, Record<string, object>> = {}
  for (const r of ROUTES) {
    const pathParams = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }))
    const queryParams = (r.query ?? []).map((name) => ({ name, in: 'query', required: false, schema: { type: 'string' } }))
    const status = String(r.ok ?? 200)
    paths[r.path] ??= {}
    paths[r.path][r.method] = {
      summary: r.summary,
      ...(r.public ? { security: [] } : {}),
      parameters: [...pathParams, ...queryParams, ...(r.path.startsWith('/e') ? [{ name: 'x-service-env', in: 'header', schema: { type: 'string' } }, { name: 'x-service-event-id-seed', in: 'header', schema: { type: 'string' } }] : [])],
      ...(r.body && { requestBody: { required: true, content: { 'application/json': { schema: r.body } } } }),
      responses: { [status]: { description: 'OK', content: { 'application/json': { schema: r.response } } }, default: { description: 'Error', content: { 'application/json': { schema: error } } } },
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Sluice', version, description: 'Event ingestion and webhooks. Errors: docs/errors.md.' },
    components: {
      securitySchemes: { signingKey: { type: 'http', scheme: 'bearer', description: 'SLUICE_SIGNING_KEY (not needed by sluice dev)' } },
      schemas: {
        Event: { type: 'object', required: ['name', 'data'], additionalProperties: false, properties: { name: { type: 'string', minLength: 1, maxLength: 256 }, data: { type: 'object' }, id: { type: 'string' }, ts: { type: 'integer', minimum: 0 } } },
        Accepted: { type: 'object', properties: { ids: { type: 'array', items: { type: 'string' } }, status: { const: 200 } } },
        StoredEvent: { type: 'object', properties: { internal_id: { type: 'string' }, id: { type: 'string' }, name: { type: 'string' }, data: { type: 'object' }, ts: { type: 'integer' }, env: { type: 'string' }, received_at: { type: 'integer' }, source: { type: 'object' }, duplicate_of: { type: 'string' } } },
        Error: { type: 'object', required: ['status', 'code', 'error'], properties: { status: { type: 'integer' }, code: { type: 'string' }, error: { type: 'string' } } },
      },
    },
    security: [{ signingKey: [] }],
    paths,
  }
}
