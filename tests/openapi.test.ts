// The OpenAPI document is generated from the routes: it lists exactly the API routes a fully
// wired server serves, each with typed requests and responses, and /docs renders it.
import t from 'tap'
import { getJson, startServer } from './helpers/server.ts'

type Schema = Record<string, any>
type Operation = { parameters?: Array<{ in: string; name: string }>; requestBody?: any; responses: Record<string, any> }

const server = await startServer()
t.teardown(() => server.stop())
const { status, body: doc } = await getJson(`${server.url}/v1/openapi.json`)
const operations = Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, path, method, op })),
)

t.test('every served API route is documented, and every documented route is served', async (t) => {
  t.equal(status, 200)
  t.equal(doc.openapi, '3.1.0')
  const isApi = (r: string) => / \/(v1|e)(\/|$)/.test(r) && !r.startsWith('OPTIONS ')
  const served = server.routes.filter(isApi).map((r) => r.replace(/:(\w+)/g, '{$1}'))
  t.same(operations.map((o) => o.route).sort(), [...new Set(served)].sort())
  t.ok(
    operations.some((o) => o.route === 'POST /e/{key}'),
    'the Event API is documented',
  )
})

// Actions named by their URL alone.
const BODYLESS = new Set([
  'POST /v1/envs/{name}/archive',
  'POST /v1/auth/logout',
  'POST /v1/webhooks/{id}/requests/{rid}/replay',
  'POST /v1/events/{id}/replay',
  'POST /v1/runs/{id}/retry',
  'POST /v1/runs/{id}/cancel',
  'POST /v1/functions/{key}/pause',
  'POST /v1/webhooks/{id}/pause',
  'POST /v1/webhooks/{id}/resume',
])

t.test('every operation declares its parameters, body and responses, with no untyped object', async (t) => {
  for (const { route, path, method, op } of operations) {
    const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
    t.same(
      op.parameters?.filter((p) => p.in === 'path').map((p) => p.name) ?? [],
      pathParams,
      `${route}: path parameters`,
    )
    if ((method === 'post' || method === 'patch') && !BODYLESS.has(route)) {
      t.ok(op.requestBody?.content?.['application/json']?.schema, `${route}: a request body schema`)
    }
    const statuses = Object.keys(op.responses)
    const ok = statuses.filter((s) => s.startsWith('2'))
    t.equal(ok.length, 1, `${route}: one success response`)
    // The live stream answers Server-Sent Events; every other success is JSON.
    const media = route === 'GET /v1/events/stream' ? 'text/event-stream' : 'application/json'
    t.ok(op.responses[ok[0]].content?.[media]?.schema, `${route}: a success schema`)
    for (const s of statuses.filter((s) => !s.startsWith('2'))) {
      t.same(
        Object.keys(op.responses[s].content['application/json'].schema.properties),
        ['status', 'code', 'error'],
        `${route} ${s}`,
      )
    }
    if (media === 'application/json' && route !== 'GET /v1/openapi.json') {
      t.same(untypedObjects(op.responses[ok[0]].content[media].schema, 'response'), [], `${route}: typed`)
    }
    if (op.requestBody)
      t.same(untypedObjects(op.requestBody.content['application/json'].schema, 'body'), [], `${route}: typed body`)
  }
})

t.test('schemas carry examples and the error codes', async (t) => {
  const error = operations.find((o) => o.route === 'POST /v1/envs')!.op.responses['400'].content['application/json']
  t.same(error.example, { status: 400, code: 'REQUEST_INVALID', error: 'body.name: must be string' })
  const codes = error.schema.properties.code.anyOf.flatMap((c: Schema) => c.enum)
  t.ok(codes.includes('REQUEST_INVALID') && codes.includes('NOT_FOUND'), 'codes are the catalogue')
  const body = operations.find((o) => o.route === 'POST /v1/webhooks')!.op.requestBody.content['application/json']
  t.ok(body.example?.name, 'request bodies have examples')
  const event = operations.find((o) => o.route === 'POST /e/{key}')!.op.requestBody.content['application/json']
  t.equal(event.schema.anyOf[0].properties.name.maxLength, 256, 'the Event API shows the configured limits')
})

t.test('the reference page is served from the package, without a CDN', async (t) => {
  const page = await fetch(`${server.url}/docs/`, { redirect: 'follow' })
  t.equal(page.status, 200)
  const html = await page.text()
  t.match(html, /swagger-ui/)
  t.notMatch(html, /https?:\/\/(?!127\.0\.0\.1)[^"']*\.(js|css)/, 'no script or style from another host')
})

/** Paths of object schemas that say nothing of their fields (a free-form object where the shape is known). */
function untypedObjects(schema: Schema, at: string): string[] {
  if (!schema || typeof schema !== 'object') return []
  const found: string[] = []
  if (schema.type === 'object' && !schema.properties && !schema.patternProperties && !schema.additionalProperties)
    found.push(at)
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'examples') continue
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) found.push(...untypedObjects(v, `${at}.${key}[${i}]`))
    } else if (typeof value === 'object') found.push(...untypedObjects(value, `${at}.${key}`))
  }
  return found
}
