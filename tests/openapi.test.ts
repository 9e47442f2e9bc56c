// The OpenAPI document lists exactly the routes a fully wired server serves.
import t from 'tap'
import { startServer, getJson } from './helpers/server.ts'
import { ROUTES } from '../api/openapi.ts'

t.test('every served API route is documented, and every documented route is served', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())
  const { status, body } = await getJson(`${server.url}/v1/openapi.json`)
  t.equal(status, 200)
  t.equal(body.openapi, '3.1.0')
  const documented = Object.entries(body.paths as Record<string, object>).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`)).sort()
  t.same(documented, ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort())
  const served = server.routes.filter((r) => !r.includes('/dashboard') && r !== 'GET /' && r !== 'GET /healthz').map((r) => r.replace(/:(\w+)/g, '{$1}')).sort()
  t.same(served, documented, 'served routes = documented routes')
  // Probe each documented route: a 404 NOT_FOUND *route* answer means it is not served.
  for (const r of ROUTES) {
    const url = server.url + r.path.replace(/\{\w+\}/g, 'x')
    const response = await fetch(url, { method: r.method.toUpperCase(), headers: { 'content-type': 'application/json' }, body: r.method === 'get' ? undefined : '{}' })
    // A stream (GET /v1/events/stream) never ends: its headers are the answer.
    const streaming = response.headers.get('content-type')?.startsWith('text/event-stream')
    if (streaming) await response.body?.cancel()
    const text = streaming ? '' : await response.text()
    t.notMatch(text, /no such route/, `${r.method.toUpperCase()} ${r.path} is served`)
  }
})
