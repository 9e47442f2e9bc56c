// Ingest of webhook requests: the raw request is captured durably before the 200, any body
// shape is accepted, and a webhook without a transform gets the documented default event.
import t from 'tap'
import { startServer } from '../helpers/server.ts'
import { createWebhook, deliver, outcome, storedEvents } from './helpers.ts'

const server = await startServer()
t.teardown(() => server.stop())
const hook = await createWebhook(server.url, { name: 'Acme Payments' })

t.test(
  'the raw request is captured: exact body, canonical headers, query arrays, source IP, receive time',
  async (t) => {
    const before = Date.now()
    const body = '{"b": 1,  "a": [true]}'
    const response = await deliver(`${hook.url}?tag=x&tag=y&single=1`, body, {
      'x-github-event': 'push',
      'X-Custom-ID': 'abc',
    })
    t.equal(response.status, 200)
    t.same(Object.keys(response.body).sort(), ['request_id', 'status'])
    t.equal(response.body.status, 200)
    const result = await outcome(server.url, hook.id, response.body.request_id)
    t.equal(result.request.body, body, 'byte for byte, not re-serialised')
    t.equal(result.request.body_encoding, 'utf8')
    t.equal(result.request.headers['X-Github-Event'], 'push')
    t.equal(result.request.headers['X-Custom-Id'], 'abc')
    t.equal(result.request.headers['Content-Type'], 'application/json')
    t.same(result.request.query, { tag: ['x', 'y'], single: ['1'] })
    t.equal(result.request.ip, '127.0.0.1')
    t.ok(result.received_at >= before && result.received_at <= Date.now())
    t.equal(result.attempt, 1)
  },
)

t.test('no transform: webhook/<name slug>.received with the JSON body as data', async (t) => {
  const response = await deliver(hook.url, { order: { id: 7, total: 12.5 } })
  const result = await outcome(server.url, hook.id, response.body.request_id)
  t.equal(result.status, 'delivered')
  t.equal(result.env, 'production')
  const [event] = await storedEvents(server.url, result.event_ids)
  t.equal(event.name, 'webhook/acme-payments.received')
  t.same(event.data, { order: { id: 7, total: 12.5 } })
})

t.test('JSON bodies of any shape: an array or a scalar is kept under data.body', async (t) => {
  for (const body of [[{ id: 1 }, { id: 2 }], 42, 'hello']) {
    const response = await deliver(hook.url, JSON.stringify(body))
    const result = await outcome(server.url, hook.id, response.body.request_id)
    const [event] = await storedEvents(server.url, result.event_ids)
    t.same(event.data, { body }, JSON.stringify(body))
  }
})

t.test('form-encoded bodies are parsed into an object; a repeated field becomes an array', async (t) => {
  const form = 'token=abc&team_id=T123&command=%2Fdeploy&text=api+prod&tag=a&tag=b'
  const response = await deliver(hook.url, form, { 'content-type': 'application/x-www-form-urlencoded' })
  const result = await outcome(server.url, hook.id, response.body.request_id)
  const [event] = await storedEvents(server.url, result.event_ids)
  t.same(event.data, { token: 'abc', team_id: 'T123', command: '/deploy', text: 'api prod', tag: ['a', 'b'] })
  t.equal(result.request.body, form)
})

t.test('text that is not JSON is kept as data.raw; an empty body is {}', async (t) => {
  const xml = '<?xml version="1.0"?><notification><id>9</id></notification>'
  const response = await deliver(hook.url, xml, { 'content-type': 'application/xml' })
  const [event] = await storedEvents(
    server.url,
    (await outcome(server.url, hook.id, response.body.request_id)).event_ids,
  )
  t.same(event.data, { raw: xml })
  const empty = await fetch(hook.url, { method: 'POST' })
  const emptyResult = await outcome(server.url, hook.id, (await empty.json()).request_id)
  t.same((await storedEvents(server.url, emptyResult.event_ids))[0].data, {})
})

t.test('a body that is not valid UTF-8 is kept byte for byte (base64)', async (t) => {
  const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d])
  const response = await fetch(hook.url, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: bytes,
  })
  const result = await outcome(server.url, hook.id, (await response.json()).request_id)
  t.equal(result.request.body_encoding, 'base64')
  t.same(Buffer.from(result.request.body, 'base64'), bytes)
})

t.test('a JSON content type with a body that is not JSON is dead-lettered, not guessed at', async (t) => {
  const response = await deliver(hook.url, '{"truncated": ')
  t.equal(response.status, 200, 'the sender still gets its 200: nothing is lost')
  const result = await outcome(server.url, hook.id, response.body.request_id)
  t.equal(result.status, 'failed')
  t.equal(result.error.code, 'JSON_INVALID')
})

t.test('the same delivery twice gets 200 twice, each with its own request id', async (t) => {
  const a = await deliver(hook.url, { n: 1 })
  const b = await deliver(hook.url, { n: 1 })
  t.same([a.status, b.status], [200, 200])
  t.not(a.body.request_id, b.body.request_id)
})

t.test('an unknown webhook id is 404; a body over the limit is 413', async (t) => {
  const unknown = await deliver(`${server.url}/e/wh_${'A'.repeat(43)}`, {})
  t.same([unknown.status, unknown.body.code], [404, 'NOT_FOUND'])
  const big = await deliver(hook.url, { blob: 'x'.repeat(600 * 1024) })
  t.same([big.status, big.body.code], [413, 'BODY_TOO_LARGE'])
})
