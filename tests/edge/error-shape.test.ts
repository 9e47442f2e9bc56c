// Defect 6 of issue 9: every answer the server can give, including those node and fastify
// give before a route runs, has the documented `{status, code, error}` shape and a code of
// docs/errors.md, with the same number in the HTTP status and the body.
import t, { type Test } from 'tap'
import { errorCatalogue } from '../../core/errors.ts'
import { startServer } from '../helpers/server.ts'
import pino from 'pino'
import { createHttpServer } from '../../api/http.ts'
import { loadConfig } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { rawRequest, sleep, type RawResponse } from '../helpers/raw-http.ts'

const server = await startServer()
t.teardown(() => server.stop())
const H = 'Host: 127.0.0.1\r\nConnection: close'

function documented(t: Test, response: RawResponse, status: number, code: string) {
  t.equal(response.status, status, `HTTP ${status}`)
  t.match(response.json, { status, code, error: String }, `body ${code}`)
  t.equal(
    Object.keys(response.json ?? {})
      .sort()
      .join(),
    'code,error,status',
    'nothing else in the body',
  )
  t.equal(
    (errorCatalogue as Record<string, { statusCode?: number }>)[code]?.statusCode,
    status,
    `${code} is in the catalogue with ${status}`,
  )
}

const cases: Array<[string, string | Buffer, number, string]> = [
  [
    'headers over 16 KiB',
    `GET /healthz HTTP/1.1\r\n${H}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    431,
    'HEADERS_TOO_LARGE',
  ],
  ['a request line that is not HTTP', 'GARBAGE\r\n\r\n', 400, 'REQUEST_INVALID'],
  ['a header without a colon', `GET /healthz HTTP/1.1\r\n${H}\r\nnocolon\r\n\r\n`, 400, 'REQUEST_INVALID'],
  [
    'both Content-Length and chunked',
    `POST /e/k HTTP/1.1\r\n${H}\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    400,
    'REQUEST_INVALID',
  ],
  [
    'a path parameter over 100 characters',
    `GET /v1/events/${'a'.repeat(101)} HTTP/1.1\r\n${H}\r\n\r\n`,
    414,
    'URL_TOO_LONG',
  ],
  [
    'an event key over 100 characters',
    `POST /e/${'k'.repeat(300)} HTTP/1.1\r\n${H}\r\nContent-Length: 2\r\n\r\n{}`,
    414,
    'URL_TOO_LONG',
  ],
  [
    'Expect: 999',
    `POST /e/k HTTP/1.1\r\n${H}\r\nExpect: 999\r\nContent-Length: 2\r\n\r\n{}`,
    417,
    'EXPECTATION_FAILED',
  ],
  ['bad percent-encoding in the path', `GET /v1/events/%zz HTTP/1.1\r\n${H}\r\n\r\n`, 400, 'REQUEST_INVALID'],
  ['no such route', `GET /nope HTTP/1.1\r\n${H}\r\n\r\n`, 404, 'NOT_FOUND'],
  ['a method the route does not take', `PUT /v1/envs HTTP/1.1\r\n${H}\r\nContent-Length: 0\r\n\r\n`, 404, 'NOT_FOUND'],
  [
    'a REST body with a garbage Content-Type',
    `POST /v1/envs HTTP/1.1\r\n${H}\r\nContent-Type: garbage\r\nContent-Length: 2\r\n\r\n{}`,
    415,
    'CONTENT_TYPE_UNSUPPORTED',
  ],
  [
    'a REST body with an empty Content-Type',
    `POST /v1/envs HTTP/1.1\r\n${H}\r\nContent-Type: \r\nContent-Length: 2\r\n\r\n{}`,
    415,
    'CONTENT_TYPE_UNSUPPORTED',
  ],
  [
    'a REST body that is not JSON',
    `POST /v1/envs HTTP/1.1\r\n${H}\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n{x}`,
    400,
    'JSON_INVALID',
  ],
  [
    'a REST body with __proto__',
    `POST /v1/envs HTTP/1.1\r\n${H}\r\nContent-Type: application/json\r\nContent-Length: 28\r\n\r\n{"__proto__":{"admin":true}}`,
    400,
    'JSON_INVALID',
  ],
  [
    'an Event API body that is not JSON',
    `POST /e/k HTTP/1.1\r\n${H}\r\nContent-Length: 3\r\n\r\n{x}`,
    400,
    'JSON_INVALID',
  ],
  [
    'an Event API body with a Content-Type that does not parse',
    `POST /e/k HTTP/1.1\r\n${H}\r\nContent-Type: ;;;\r\nContent-Length: 2\r\n\r\n{}`,
    415,
    'CONTENT_TYPE_UNSUPPORTED',
  ],
  [
    'an Event API body with an odd but valid Content-Type',
    `POST /e/k HTTP/1.1\r\n${H}\r\nContent-Type: text/x-odd\r\nContent-Length: 3\r\n\r\n{x}`,
    400,
    'JSON_INVALID',
  ],
]

for (const [what, bytes, status, code] of cases) {
  t.test(`${what}: ${status} ${code}`, async (t) => documented(t, await rawRequest(server.url, bytes), status, code))
}

t.test('a request that arrives while the server shuts down gets 503 SERVER_CLOSING in the same shape', async (t) => {
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  const http = createHttpServer(
    { host: '127.0.0.1', port: 0, trustProxy: false, eventLimits: loadConfig('dev', {}, {}), limits: DEFAULTS },
    pino({ level: 'silent' }),
    [
      async (app) => {
        app.get('/slow', async () => {
          await held
          return { ok: true }
        })
      },
    ],
  )
  await http.start()
  const inFlight = http.app.inject({ method: 'GET', url: '/slow' })
  await sleep(50)
  const stopping = http.stop()
  const late = await http.app.inject({ method: 'GET', url: '/healthz' })
  release()
  t.equal((await inFlight).statusCode, 200, 'the request in flight is answered')
  await stopping
  t.same(
    [late.statusCode, late.json()],
    [503, { status: 503, code: 'SERVER_CLOSING', error: 'the server is shutting down; retry' }],
  )
  t.equal(late.headers['retry-after'], '1', 'a 503 says when to come back')
})

t.test('the 404 message names the route but never an event key or webhook ID in the path', async (t) => {
  const response = await rawRequest(server.url, `GET /e/secret-key-123/extra?token=abc HTTP/1.1\r\n${H}\r\n\r\n`)
  t.same(response.json, { status: 404, code: 'NOT_FOUND', error: 'GET /e/…/extra: no such route' })
  const webhook = await rawRequest(server.url, `GET /v1/nope/wh_secretsecret HTTP/1.1\r\n${H}\r\n\r\n`)
  t.notMatch(webhook.json.error, /secret/)
})

t.test("a request's failure is logged once, with the request's id; answered requests log nothing", async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  const http = createHttpServer(
    { host: '127.0.0.1', port: 0, trustProxy: false, eventLimits: loadConfig('dev', {}, {}), limits: DEFAULTS },
    log,
    [
      async (app) => {
        app.get('/fails', async () => {
          throw new Error('disk on fire')
        })
        app.get('/fine', async () => ({ ok: true }))
      },
    ],
  )
  t.teardown(() => http.stop())
  t.equal((await http.app.inject({ method: 'GET', url: '/fine' })).statusCode, 200)
  t.same(lines, [], 'an answered request writes no line')
  const failed = await http.app.inject({ method: 'GET', url: '/fails' })
  t.equal(failed.statusCode, 500)
  t.equal(lines.length, 1, 'one line for the failure')
  t.match(lines[0], { level: 50, msg: 'request failed', reqId: String, err: { message: 'disk on fire' } })
})
