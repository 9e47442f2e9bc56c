// A bad query or body on any REST route is `400 REQUEST_INVALID` naming the field, and changes
// nothing. The table must cover every documented route that takes a query or a body.
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import t from 'tap'
import { createHttpServer } from '../api/http.ts'
import { DEFAULTS } from '../config/settings.ts'
import { One } from '../api/schemas.ts'
import { Webhook } from '../api/webhook-schemas.ts'
import { getJson, startServer } from './helpers/server.ts'

const server = await startServer()
t.teardown(() => server.stop())

async function call(method: string, path: string, body?: unknown) {
  const init: RequestInit = { method }
  if (body !== undefined)
    Object.assign(init, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const response = await fetch(server.url + path, init)
  return { status: response.status, body: await response.json() }
}

const hook = (await call('POST', '/v1/webhooks', { name: 'validation' })).body.data
await call('POST', '/v1/envs', { name: 'staging' })

// route as documented → [method, URL, body, the error message]
const CASES: Record<string, [string, string, unknown, string]> = {
  'GET /v1/events': ['GET', '/v1/events?limit=ten', undefined, 'query.limit: must be integer'],
  'GET /v1/events/stream': ['GET', '/v1/events/stream?since=yesterday', undefined, 'query.since: must be integer'],
  'GET /v1/runs': ['GET', '/v1/runs?limit=5000', undefined, 'query.limit: must be <= 1000'],
  'GET /v1/functions': ['GET', '/v1/functions?env=a&env=b', undefined, 'query.env: must be string'],
  'GET /v1/webhooks': ['GET', '/v1/webhooks?env=a&env=b', undefined, 'query.env: must be string'],
  'GET /v1/webhooks/{id}/requests': [
    'GET',
    `/v1/webhooks/${hook.id}/requests?status=lost`,
    undefined,
    'query.status: must be one of delivered, failed, unrouted, held',
  ],
  'POST /v1/envs': ['POST', '/v1/envs', { name: 5 }, 'body.name: must be string'],
  'PATCH /v1/envs/{name}': [
    'PATCH',
    '/v1/envs/staging',
    { max_body_bytes: '2048' },
    'body.max_body_bytes: must be integer',
  ],
  'POST /v1/keys': ['POST', '/v1/keys', {}, 'body.env: required'],
  'POST /v1/auth/login': ['POST', '/v1/auth/login', { email: 'a@example.com' }, 'body.password: required'],
  'POST /v1/users': [
    'POST',
    '/v1/users',
    { email: 'a@example.com', password: 'short', role: 'viewer' },
    'body.password: must NOT have fewer than 12 characters',
  ],
  'GET /v1/audit': ['GET', '/v1/audit?since=yesterday', undefined, 'query.since: must be integer'],
  'POST /v1/tokens': ['POST', '/v1/tokens', { name: 'ci' }, 'body.role: required'],
  'POST /v1/erasures': ['POST', '/v1/erasures', { env: 'production', path: 'data.user.id' }, 'body.value: required'],
  'POST /v1/backups': ['POST', '/v1/backups', { to: 42 }, 'body.to: must be string'],
  'GET /v1/apps': ['GET', '/v1/apps?env=a&env=b', undefined, 'query.env: must be string'],
  'POST /v1/apps': ['POST', '/v1/apps', { url: 5 }, 'body.url: must be string'],
  'DELETE /v1/apps/{id}': ['DELETE', '/v1/apps/shop?env=a&env=b', undefined, 'query.env: must be string'],
  'POST /v1/functions/{key}/pause': [
    'POST',
    '/v1/functions/app-f/pause?env=a&env=b',
    undefined,
    'query.env: must be string',
  ],
  'POST /v1/functions/{key}/resume': [
    'POST',
    '/v1/functions/app-f/resume',
    { skip_held: 'yes' },
    'body.skip_held: must be boolean',
  ],
  'POST /v1/runs/bulk': [
    'POST',
    '/v1/runs/bulk',
    { action: 'delete', filter: {} },
    'body.action: must be one of cancel, replay',
  ],
  'POST /v1/runs/bulk/dry-run': [
    'POST',
    '/v1/runs/bulk/dry-run',
    { action: 'cancel', filter: { function: 5 } },
    'body.filter.function: must be string',
  ],
  'POST /v1/webhooks': ['POST', '/v1/webhooks', { name: 'x', disabled: 'yes' }, 'body.disabled: must be boolean'],
  'PATCH /v1/webhooks/{id}': [
    'PATCH',
    `/v1/webhooks/${hook.id}`,
    { allow_ips: '10.0.0.0/8' },
    'body.allow_ips: must be array or null',
  ],
  'POST /v1/webhooks/{id}/preview': [
    'POST',
    `/v1/webhooks/${hook.id}/preview`,
    { payload: {}, query: { a: [1] } },
    'body.query.a[0]: must be string',
  ],
  'POST /v1/webhooks/{id}/requests/replay': [
    'POST',
    `/v1/webhooks/${hook.id}/requests/replay`,
    { status: 'delivered' },
    'body.status: must be one of failed, unrouted',
  ],
  'POST /v1/alerts': [
    'POST',
    '/v1/alerts',
    { name: 'x', webhook_id: hook.id, metric: 'failed_requests', threshold: '5', endpoint: 'https://example.com' },
    'body.threshold: must be number',
  ],
  'GET /v1/alerts/incidents': [
    'GET',
    '/v1/alerts/incidents?status=closed',
    undefined,
    'query.status: must be one of open, resolved',
  ],
  'GET /v1/insights/events': ['GET', '/v1/insights/events?top=50', undefined, 'query.top: must be <= 20'],
  'GET /v1/insights/run-outcomes': [
    'GET',
    '/v1/insights/run-outcomes?from=5000&to=1000',
    undefined,
    'query.from: must be before query.to',
  ],
  'GET /v1/insights/webhook-failures': [
    'GET',
    '/v1/insights/webhook-failures?to=soon',
    undefined,
    'query.to: must be an integer (milliseconds) or an ISO 8601 time',
  ],
  'GET /v1/schemas': ['GET', '/v1/schemas?env=a&env=b', undefined, 'query.env: must be string'],
  'GET /v1/schemas/{name}': ['GET', '/v1/schemas/x?env=a&env=b', undefined, 'query.env: must be string'],
  'PUT /v1/schemas/{name}': ['PUT', '/v1/schemas/x', { schema: [] }, 'body.schema: must be object'],
  'POST /v1/schemas/{name}/draft': ['POST', '/v1/schemas/x/draft', { limit: 10_001 }, 'body.limit: must be <= 10000'],
  'GET /v1/schemas/{name}/violations': [
    'GET',
    '/v1/schemas/x/violations?since=0&until=3600000000&bucket=60000',
    undefined,
    'query.bucket: the range holds 60000 buckets, at most 500: widen bucket',
  ],
  'POST /v1/insights/query': [
    'POST',
    '/v1/insights/query',
    { sql: '' },
    'body.sql: must NOT have fewer than 1 characters',
  ],
}

t.test('every REST route that takes a query or a body has a case', async (t) => {
  const doc = (await getJson(`${server.url}/v1/openapi.json`)).body
  const withInput: string[] = []
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const takesQuery = (op.parameters ?? []).some((p: { in: string }) => p.in === 'query')
      if (path.startsWith('/v1/') && (takesQuery || op.requestBody)) withInput.push(`${method.toUpperCase()} ${path}`)
    }
  }
  t.same(Object.keys(CASES).sort(), withInput.sort())
})

t.test('a bad query or body is 400 REQUEST_INVALID naming the field', async (t) => {
  for (const [route, [method, url, body, error]] of Object.entries(CASES)) {
    t.same(await call(method, url, body), { status: 400, body: { status: 400, code: 'REQUEST_INVALID', error } }, route)
  }
})

t.test('a query number that is not finite (1e400, Infinity) is 400, not a 500 when the page is written', async (t) => {
  for (const url of ['/v1/events?limit=1e400', '/v1/runs?limit=Infinity', '/v1/events/stream?since=1e400']) {
    const error = `query.${url.includes('since') ? 'since' : 'limit'}: must be a finite number`
    t.same(await call('GET', url), { status: 400, body: { status: 400, code: 'REQUEST_INVALID', error } }, url)
  }
})

t.test('a body of the wrong type, or with an unknown field, is refused and changes nothing', async (t) => {
  const envs = (await call('GET', '/v1/envs')).body
  t.same((await call('POST', '/v1/envs', [{ name: 'a' }])).body.error, 'body: must be object')
  t.same((await call('POST', '/v1/envs', { name: 'qa', colour: 'blue' })).body.error, 'body.colour: unknown field')
  t.same(
    (await call('PATCH', '/v1/envs/staging', { max_body_bytes: 10 })).body.error,
    'body.max_body_bytes: must be >= 1024',
  )
  t.same((await call('GET', '/v1/envs')).body, envs, 'no environment created or changed')
  const webhooks = (await call('GET', '/v1/webhooks')).body
  const verification = { preset: 'github', secret: 'whsec_0123456789', extra: 1 }
  t.same(
    (await call('POST', '/v1/webhooks', { name: 'y', verification })).body.error,
    'body.verification.extra: unknown field',
  )
  t.same((await call('GET', '/v1/webhooks')).body, webhooks, 'no webhook created')
})

t.test('an optional body may be left out', async (t) => {
  const replayed = await call('POST', `/v1/webhooks/${hook.id}/requests/replay`)
  t.same(replayed, { status: 202, body: { data: { status: 'failed', replayed: 0 } } })
})

t.test('a field the response schema does not declare never leaves, even if a handler returns it', async (t) => {
  const shown = { preset: 'github', header: null, public_url: null, tolerance_seconds: null, rotating: true }
  const leaky = {
    ...(await call('GET', `/v1/webhooks/${hook.id}`)).body.data,
    verification: {
      ...shown,
      secret: 'whsec_must_not_leave',
      previous_secret: 'whsec_must_not_leave_either',
    },
    internalNote: 'must not leave either',
  }
  const limits = { maxEvents: 10, maxJsonDepth: 8, maxNameLength: 64, maxIdLength: 64 }
  const config = { host: '127.0.0.1', port: 0, trustProxy: false as const, eventLimits: limits, limits: DEFAULTS }
  const routes = async (app: FastifyInstance) => {
    app.get('/v1/leaky', { schema: { response: { 200: One(Webhook) } } }, async () => ({ data: leaky }))
  }
  const { app } = createHttpServer(config, pino({ level: 'silent' }), [routes])
  t.teardown(() => app.close())
  const response = await app.inject({ method: 'GET', url: '/v1/leaky' })
  t.equal(response.statusCode, 200)
  t.notMatch(response.body, /whsec_must_not_leave|internalNote/)
  t.same(response.json().data.verification, shown)
})
