// POST /e/<event_key>: each line of DESIGN.md's Event API contract, over real HTTP.
import t from 'tap'
import { startServer, postJson, getJson, eventually } from '../helpers/server.ts'
import { isUlid, newIdSeed, ulidTime } from '../../core/ids.ts'

const server = await startServer()
t.teardown(() => server.stop())
const url = `${server.url}/e/any-key`
const stored = (id: string) =>
  eventually(async () => {
    const r = await getJson(`${server.url}/v1/events/${id}`)
    return r.status === 200 ? r.body.data : undefined
  })

t.test('a single event is accepted with one ULID, stored with its fields', async (t) => {
  const before = Date.now()
  const r = await postJson(url, { name: 'app/user.created', data: { plan: 'pro' } })
  t.equal(r.status, 200)
  t.equal(r.body.status, 200)
  t.equal(r.body.ids.length, 1)
  t.ok(isUlid(r.body.ids[0]))
  const e = await stored(r.body.ids[0])
  t.match(e, {
    internal_id: r.body.ids[0],
    id: r.body.ids[0],
    name: 'app/user.created',
    data: { plan: 'pro' },
    env: 'production',
    source: { kind: 'api' },
  })
  t.ok(e.ts >= before && e.ts <= Date.now(), 'ts defaults to the receive time in ms')
  t.equal(e.ts, e.received_at)
})

t.test('an array gets one ID per event, in order, and keeps given id and ts', async (t) => {
  const r = await postJson(url, [
    { name: 'a/one', data: {} },
    { name: 'a/two', data: { x: 1 }, id: 'given-1', ts: 1_600_000_000_000 },
  ])
  t.equal(r.status, 200)
  t.equal(r.body.ids.length, 2)
  t.ok(ulidTime(r.body.ids[0]) <= ulidTime(r.body.ids[1]), 'time-ordered')
  const second = await stored(r.body.ids[1])
  t.match(second, { name: 'a/two', id: 'given-1', ts: 1_600_000_000_000 })
  t.equal((await stored(r.body.ids[0])).name, 'a/one')
})

t.test('a body without Content-Type is accepted as JSON', async (t) => {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify({ name: 'a/no-ctype', data: {} }) })
  t.equal(response.status, 200)
  t.equal((await response.json()).ids.length, 1)
})

const invalid: Array<[string, unknown, string, string]> = [
  ['missing name', { data: {} }, 'EVENT_INVALID', 'events[0].name: must be a non-empty string'],
  ['empty name', { name: '', data: {} }, 'EVENT_INVALID', 'events[0].name: must be a non-empty string'],
  ['name too long', { name: 'x'.repeat(257), data: {} }, 'EVENT_INVALID', 'events[0].name: longer than 256 characters'],
  [
    'reserved prefix',
    { name: 'sluice/function.failed', data: {} },
    'EVENT_INVALID',
    'events[0].name: the prefix "sluice/" is reserved',
  ],
  ['data not an object', { name: 'a/b', data: [1] }, 'EVENT_INVALID', 'events[0].data: must be a JSON object'],
  ['data missing', { name: 'a/b' }, 'EVENT_INVALID', 'events[0].data: must be a JSON object'],
  [
    'id not a string',
    { name: 'a/b', data: {}, id: 5 },
    'EVENT_INVALID',
    'events[0].id: must be a non-empty string when given',
  ],
  [
    'ts not an integer',
    { name: 'a/b', data: {}, ts: 1.5 },
    'EVENT_INVALID',
    'events[0].ts: must be a non-negative integer of milliseconds',
  ],
  [
    'ts a string',
    { name: 'a/b', data: {}, ts: '2024-01-01' },
    'EVENT_INVALID',
    'events[0].ts: must be a non-negative integer of milliseconds',
  ],
  [
    'unknown field',
    { name: 'a/b', data: {}, nmae: 'typo' },
    'EVENT_INVALID',
    'events[0].nmae: unknown field (allowed: name, data, id, ts)',
  ],
  ['not an object', '"just a string"', 'EVENT_INVALID', 'events[0]: must be a JSON object with name and data'],
  ['empty array', [], 'EVENT_INVALID', 'events: the array is empty'],
]
for (const [what, body, code, error] of invalid) {
  t.test(`400 ${code} names the field: ${what}`, async (t) => {
    const r = await postJson(url, body)
    t.same(r.body, { status: 400, code, error })
    t.equal(r.status, 400)
  })
}

t.test('a batch is all-or-nothing: one bad event rejects all and stores none', async (t) => {
  const marker = `batch-${Date.now()}`
  const r = await postJson(url, [
    { name: marker, data: {} },
    { name: marker, data: {} },
    { name: marker, data: {} },
    { name: '', data: {} },
  ])
  t.same(r.body, { status: 400, code: 'EVENT_INVALID', error: 'events[3].name: must be a non-empty string' })
  await postJson(url, { name: 'sentinel/after-bad-batch', data: {} })
  await eventually(async () =>
    (await getJson(`${server.url}/v1/events?name=sentinel/after-bad-batch`)).body.data.length === 1 ? true : undefined,
  )
  t.same((await getJson(`${server.url}/v1/events?name=${marker}`)).body.data, [], 'nothing of the batch was stored')
})

t.test('400 on invalid JSON, too many events, and nesting deeper than the limit', async (t) => {
  const bad = await postJson(url, '{"name": "a/b", "data": ')
  t.equal(bad.status, 400)
  t.equal(bad.body.code, 'JSON_INVALID')
  t.match(bad.body.error, /^body: not valid JSON/)
  const many = await postJson(
    url,
    Array.from({ length: 5001 }, () => ({ name: 'a/b', data: {} })),
  )
  t.same(many.body, { status: 400, code: 'TOO_MANY_EVENTS', error: 'events: 5001 events, the limit is 5000' })
  const exactly = await postJson(
    url,
    Array.from({ length: 5000 }, () => ({ name: 'a/max', data: {} })),
  )
  t.equal(exactly.status, 200, '5000 events are accepted')
  t.equal(exactly.body.ids.length, 5000)
  let data: Record<string, unknown> = {}
  for (let i = 0; i < 100; i++) data = { d: data }
  const deep = await postJson(url, { name: 'a/deep', data })
  t.same(deep.body, { status: 400, code: 'JSON_TOO_DEEP', error: 'body: nests deeper than 64 levels' })
  const deepString = '['.repeat(200_000) + ']'.repeat(200_000)
  const hostile = await postJson(url, deepString)
  t.equal(hostile.status, 400, 'a very deep array does not crash the server')
})

t.test('413 over 512 KiB; an environment can raise its own limit', async (t) => {
  const big = { name: 'a/big', data: { blob: 'x'.repeat(600 * 1024) } }
  const r = await postJson(url, big)
  t.equal(r.status, 413)
  t.equal(r.body.code, 'BODY_TOO_LARGE')
  t.match(r.body.error, /limit for environment "production" is 524288/)
  const patched = await fetch(`${server.url}/v1/envs/production`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ max_body_bytes: 1024 * 1024 }),
  })
  t.equal(patched.status, 200)
  t.equal((await postJson(url, big)).status, 200, 'accepted under the raised limit')
  const bad = await fetch(`${server.url}/v1/envs/production`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ max_body_bytes: 'lots' }),
  })
  t.same(await bad.json(), { status: 400, code: 'REQUEST_INVALID', error: 'body.max_body_bytes: must be integer' })
})

t.test('x-service-event-id-seed makes IDs deterministic; an invalid seed is a 400', async (t) => {
  const seed = newIdSeed()
  const body = [
    { name: 'seeded/a', data: {} },
    { name: 'seeded/b', data: {} },
  ]
  const first = await postJson(url, body, { 'x-service-event-id-seed': seed })
  const again = await postJson(url, body, { 'x-service-event-id-seed': seed })
  t.same(again.body.ids, first.body.ids, 'the same seed yields the same IDs')
  t.not(first.body.ids[0], first.body.ids[1])
  t.equal(ulidTime(first.body.ids[0]), Number(seed.split(',')[0]), 'IDs carry the seed time')
  const bad = await postJson(url, body, { 'x-service-event-id-seed': 'nonsense' })
  t.equal(bad.status, 400)
  t.equal(bad.body.code, 'ID_SEED_INVALID')
})

t.test('dev mode: CORS is open on /e/* for the dashboard', async (t) => {
  const preflight = await fetch(url, {
    method: 'OPTIONS',
    headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'POST' },
  })
  t.equal(preflight.status, 204)
  t.equal(preflight.headers.get('access-control-allow-origin'), '*')
  const r = await postJson(url, { name: 'a/cors', data: {} }, { origin: 'http://localhost:3000' })
  t.equal(r.headers.get('access-control-allow-origin'), '*')
  // Only a browser sends Origin, and only a browser reads these headers.
  const noOrigin = await postJson(url, { name: 'a/cors', data: {} })
  t.equal(noOrigin.status, 200)
  t.equal(noOrigin.headers.get('access-control-allow-origin'), null)
})

t.test('an unknown route is a 404 in the same error shape', async (t) => {
  const r = await getJson(`${server.url}/nope`)
  t.same(r.body, { status: 404, code: 'NOT_FOUND', error: 'GET /nope: no such route' })
})
