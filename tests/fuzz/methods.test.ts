// Issue 35, item 6: every HTTP method, with and without a body of every kind, on every path the
// server answers (its own route list, so routes added later are covered too), in dev mode (where
// /e also answers CORS preflights) and in production. A method a path does not serve is a 404 in
// the documented shape, whatever body it carries; nothing is ever a 5xx.
import t from 'tap'
import { errorCatalogue } from '../../core/errors.ts'
import { startServer, TEST_SIGNING_KEY, type TestServer } from '../helpers/server.ts'
import { rawRequest } from '../helpers/raw-http.ts'
import { request } from 'node:http'

t.setTimeout(240_000)

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
const BODIES: Record<string, string | Buffer | undefined> = {
  none: undefined,
  empty: '',
  event: '{"name":"a/b","data":{}}',
  'JSON that is no event': '[1,{"x":null}]',
  garbage: 'garbage{{',
  'invalid UTF-8': Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
}
const CONTENT_TYPES = [undefined, 'application/json', 'text/plain', 'garbage', 'application/octet-stream']
// An endless Server-Sent Events body, which inject() would wait on forever (tests/dashboard/rest.test.ts).
const ENDLESS = new Set(['GET /v1/events/stream', 'HEAD /v1/events/stream'])

/** Every path of the server's routes, parameters filled with values that name nothing, plus what /e also takes. */
function pathsOf(server: TestServer): string[] {
  const patterns = new Set(server.routes.map((route) => route.split(' ')[1]))
  for (const extra of ['/e', '/e/:key', '/e/:key/extra', '/dashboard/', '/nope']) patterns.add(extra)
  const paths = new Set<string>()
  for (const pattern of patterns) {
    paths.add(pattern.replace(/:[a-z]+/gi, 'nope').replace(/\*$/, 'nope'))
    if (pattern === '/dashboard/:file') paths.add('/dashboard/index.html')
  }
  return [...paths]
}

/** What is wrong with one answer, or undefined when it is a success or a documented 4xx. */
function problemOf(method: string, status: number, body: string): string | undefined {
  if (status >= 500) return `${status} ${body.slice(0, 200)}`
  if (status < 400 || method === 'HEAD') return undefined
  let parsed: { status?: unknown; code?: unknown; error?: unknown }
  try {
    parsed = JSON.parse(body)
  } catch {
    return `${status}, a body that is not JSON: ${body.slice(0, 100)}`
  }
  const spec = (errorCatalogue as Record<string, { statusCode?: number }>)[String(parsed.code)]
  const shaped =
    Object.keys(parsed).sort().join() === 'code,error,status' &&
    parsed.status === status &&
    typeof parsed.error === 'string' &&
    spec?.statusCode === status
  return shaped ? undefined : `${status}, not the documented shape: ${body.slice(0, 200)}`
}

for (const mode of ['dev', 'start'] as const) {
  t.test(
    `${mode}: every method, body and Content-Type on every path: no 5xx, errors in the documented shape`,
    async (t) => {
      const server = await startServer({ mode })
      t.teardown(() => server.stop())
      const paths = pathsOf(server)
      t.ok(paths.length >= 40, `${paths.length} paths`)
      const problems: string[] = []
      const statuses: Record<number, number> = {}
      let sent = 0
      for (const path of paths)
        for (const method of METHODS) {
          if (ENDLESS.has(`${method} ${path}`)) continue
          for (const [bodyName, payload] of Object.entries(BODIES))
            for (const contentType of CONTENT_TYPES) {
              const headers: Record<string, string> = { authorization: `Bearer ${TEST_SIGNING_KEY}` }
              if (contentType !== undefined) headers['content-type'] = contentType
              const response = await server.inject({
                method,
                url: path,
                headers,
                ...(payload !== undefined && { payload }),
              })
              sent++
              statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
              const problem = problemOf(method, response.statusCode, response.body)
              if (problem)
                problems.push(`${method} ${path} (${bodyName}, ${contentType ?? 'no Content-Type'}): ${problem}`)
            }
        }
      t.comment(`${sent} requests; ${JSON.stringify(statuses)}`)
      t.same(problems.slice(0, 20), [], `no 5xx and no undocumented answer (${problems.length} in all)`)
      t.ok(sent >= 10_000, `${sent} requests`)
    },
  )

  t.test(`${mode}: the issue's OPTIONS with a JSON body, over a real socket`, async (t) => {
    const server = await startServer({ mode })
    t.teardown(() => server.stop())
    const body = '{"name":"a/b","data":{}}'
    for (const path of ['/e', '/e/some-key']) {
      const response = await rawRequest(
        server.url,
        // A browser's preflight: it always carries Origin (without it, no CORS headers are sent).
        `OPTIONS ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
          'Origin: http://localhost:3000\r\nAccess-Control-Request-Method: POST\r\n' +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      )
      if (mode === 'dev') {
        t.equal(response.status, 204, `${path}: the preflight is answered, its body ignored`)
        t.equal(response.headers['access-control-allow-methods'], 'POST, OPTIONS', `${path}: CORS headers`)
      } else {
        t.same(
          response.json,
          { status: 404, code: 'NOT_FOUND', error: `OPTIONS ${path === '/e' ? '/e' : '/e/…'}: no such route` },
          `${path}: production serves no preflight`,
        )
      }
    }
  })
}

/** One request over a socket (node:http knows that a HEAD answer has no body). */
function send(url: string, method: string, headers: Record<string, string>, body?: string | Buffer) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const sent = request(url, { method, headers }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
      })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }))
    })
    sent.on('error', reject)
    sent.end(body)
  })
}

t.test('start: the ops listener (probes, /metrics), every method and body: no 5xx, errors in the shape', async (t) => {
  const server = await startServer({ mode: 'start' })
  t.teardown(() => server.stop())
  const problems: string[] = []
  let sent = 0
  for (const path of ['/healthz', '/readyz', '/metrics', '/nope', '/e'])
    for (const method of METHODS)
      for (const [bodyName, payload] of Object.entries(BODIES))
        for (const contentType of CONTENT_TYPES) {
          const headers: Record<string, string> = {}
          if (contentType !== undefined) headers['content-type'] = contentType
          const response = await send(`${server.opsUrl}${path}`, method, headers, payload)
          sent++
          const served = (method === 'GET' || method === 'HEAD') && path !== '/nope' && path !== '/e'
          const problem =
            problemOf(method, response.status, response.body) ??
            (served === (response.status === 200) ? undefined : `${response.status}`)
          if (problem) problems.push(`${method} ${path} (${bodyName}, ${contentType ?? 'no Content-Type'}): ${problem}`)
        }
  t.same(problems.slice(0, 20), [], `${sent} requests: GET and HEAD of its routes 200, the rest 404 in the shape`)
})
