// Event keys and environments (DESIGN.md, Environments) on a production server (`sluice start`).
import t from 'tap'
import { startServer, postJson, getJson, eventually, TEST_SIGNING_KEY } from '../helpers/server.ts'

const server = await startServer({ mode: 'start' })
t.teardown(() => server.stop())
const auth = { authorization: `Bearer ${TEST_SIGNING_KEY}` }
const rest = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(server.url + path, {
    method,
    headers: { ...auth, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, body: await response.json() }
}
const send = (key: string, headers: Record<string, string> = {}) =>
  postJson(`${server.url}/e/${key}`, { name: 'k/test', data: {} }, headers)

t.test('the REST API needs the signing key (or a token, or a session)', async (t) => {
  const none = await getJson(`${server.url}/v1/keys`)
  t.same(none, {
    status: 401,
    body: {
      status: 401,
      code: 'UNAUTHORIZED',
      error: 'authorization: expected "Bearer <signing key or API token>", or a signed-in session',
    },
  })
  t.equal((await getJson(`${server.url}/v1/keys`, { authorization: 'Bearer wrong' })).status, 401)
  t.equal((await rest('GET', '/v1/keys')).status, 200)
})

t.test('production always exists; other environments are created by name', async (t) => {
  t.same(
    (await rest('GET', '/v1/envs')).body.data.map((e: { name: string }) => e.name),
    ['production'],
  )
  const created = await rest('POST', '/v1/envs', { name: 'staging' })
  t.equal(created.status, 201)
  t.match(created.body.data, { name: 'staging', kind: 'standard', archived_at: null })
  t.equal((await rest('POST', '/v1/envs', { name: 'staging' })).body.code, 'CONFLICT')
  t.same(
    (await rest('POST', '/v1/envs', { name: 'Bad Name!' })).body.error,
    'body.name: must be 1-64 characters of a-z, 0-9, ".", "_", "-", starting with a letter or digit',
  )
  t.equal((await rest('POST', '/v1/envs', { name: 'branch' })).status, 400, '"branch" is the group name')
})

t.test('a key is shown once, stored hashed, writes to its environment', async (t) => {
  const created = await rest('POST', '/v1/keys', { env: 'staging' })
  t.equal(created.status, 201)
  const { id, env, key } = created.body.data
  t.equal(env, 'staging')
  t.match(key, /^sk_[A-Za-z0-9_-]{32}$/)
  const listed = (await rest('GET', '/v1/keys')).body.data.find((k: { id: string }) => k.id === id)
  t.equal(listed.key, undefined, 'the key is never listed')
  t.equal(listed.prefix, key.slice(0, 9))
  const r = await send(key)
  t.equal(r.status, 200)
  const e = await eventually(async () => {
    const g = await rest('GET', `/v1/events/${r.body.ids[0]}`)
    return g.status === 200 ? g.body.data : undefined
  })
  t.equal(e.env, 'staging')
  t.same(e.source, { kind: 'api', key_id: id })
})

t.test('401 for an unknown key and for a revoked key', async (t) => {
  t.same((await send('sk_unknown')).body, { status: 401, code: 'KEY_INVALID', error: 'event key: unknown or revoked' })
  const { id, key } = (await rest('POST', '/v1/keys', { env: 'production' })).body.data
  t.equal((await send(key)).status, 200)
  t.equal((await rest('DELETE', `/v1/keys/${id}`)).status, 200)
  t.equal((await send(key)).status, 401, 'revoked at once')
  t.equal((await postJson(`${server.url}/e`, { name: 'k/test', data: {} })).status, 401, 'no key at all')
})

t.test('branch keys: x-service-env selects a branch; missing → 400, unknown or archived → 404', async (t) => {
  const { key } = (await rest('POST', '/v1/keys', { env: 'branch' })).body.data
  t.same((await send(key)).body, {
    status: 400,
    code: 'ENV_REQUIRED',
    error: 'x-service-env: required with a branch environment key',
  })
  t.same((await send(key, { 'x-service-env': 'feature-a' })).body, {
    status: 404,
    code: 'ENV_NOT_FOUND',
    error: 'x-service-env: no active branch environment named "feature-a"',
  })
  t.equal((await rest('POST', '/v1/envs', { name: 'feature-a', branch: true })).status, 201)
  const ok = await send(key, { 'x-service-env': 'feature-a' })
  t.equal(ok.status, 200)
  const e = await eventually(async () => {
    const g = await rest('GET', `/v1/events/${ok.body.ids[0]}`)
    return g.status === 200 ? g.body.data : undefined
  })
  t.equal(e.env, 'feature-a')
  t.equal((await send(key, { 'x-service-env': 'staging' })).status, 404, 'a standard env is not a branch')
  t.equal((await rest('POST', '/v1/envs/feature-a/archive')).status, 200)
  t.equal((await send(key, { 'x-service-env': 'feature-a' })).status, 404, 'archived')
  t.equal((await rest('POST', '/v1/keys', { env: 'feature-a' })).status, 400, 'keys of a branch belong to the group')
  t.equal((await rest('POST', '/v1/keys', { env: 'nope' })).status, 404)
})

t.test('a non-branch key writes to its environment whatever x-service-env says', async (t) => {
  const { key } = (await rest('POST', '/v1/keys', { env: 'production' })).body.data
  const r = await send(key, { 'x-service-env': 'staging' })
  const e = await eventually(async () => {
    const g = await rest('GET', `/v1/events/${r.body.ids[0]}`)
    return g.status === 200 ? g.body.data : undefined
  })
  t.equal(e.env, 'production')
})

t.test('the dev server needs no key and maps any key to production', async (t) => {
  const dev = await startServer()
  t.teardown(() => dev.stop())
  const r = await postJson(`${dev.url}/e/whatever`, { name: 'd/x', data: {} })
  t.equal(r.status, 200)
  t.equal((await postJson(`${dev.url}/e`, { name: 'd/x', data: {} })).status, 200)
  t.equal((await postJson(`${dev.url}/e/whatever`, { name: 'd/x', data: {} }, { 'x-service-env': 'nope' })).status, 404)
  const e = await eventually(async () => {
    const g = await getJson(`${dev.url}/v1/events/${r.body.ids[0]}`)
    return g.status === 200 ? g.body.data : undefined
  })
  t.equal(e.env, 'production')
})

t.test('sluice start refuses to run without a signing key', async (t) => {
  await t.rejects(startServer({ mode: 'start', flags: { signingKey: undefined } }), { code: 'CONFIG_INVALID' })
})

t.test(
  'an environment rate limit answers 429 with Retry-After, accepts nothing of that request, and lets events through again after it',
  async (t) => {
    t.equal(
      (await rest('POST', '/v1/envs', { name: 'limited', max_events_per_second: 0 })).status,
      400,
      'max_events_per_second must be positive',
    )
    const created = await rest('POST', '/v1/envs', { name: 'limited', max_events_per_second: 5 })
    t.equal(created.body.data.max_events_per_second, 5)
    const { key } = (await rest('POST', '/v1/keys', { env: 'limited' })).body.data
    const post = (events: unknown[]) => postJson(`${server.url}/e/${key}`, events)
    t.equal(
      (await post(Array.from({ length: 5 }, (_, i) => ({ name: 'rate/ok', data: { i } })))).status,
      200,
      "a second's worth passes",
    )
    const limited = await post([{ name: 'rate/over', data: {} }])
    t.equal(limited.status, 429)
    t.match(limited.body, {
      status: 429,
      code: 'RATE_LIMITED',
      error: /environment "limited" takes 5 events per second/,
    })
    const retryAfter = Number(limited.headers.get('retry-after'))
    t.ok(retryAfter >= 1, `Retry-After: ${retryAfter}`)
    const production = (await rest('POST', '/v1/keys', { env: 'production' })).body.data.key
    t.equal((await send(production)).status, 200, 'other environments are not limited')
    await new Promise((r) => setTimeout(r, retryAfter * 1000))
    t.equal((await post([{ name: 'rate/later', data: {} }])).status, 200, 'accepted after Retry-After')
    await eventually(async () =>
      (await rest('GET', '/v1/events?name=rate/later')).body.data.length === 1 ? true : undefined,
    )
    t.equal((await rest('GET', '/v1/events?name=rate/over')).body.data.length, 0, 'the limited request stored nothing')
    t.equal(
      (await rest('PATCH', '/v1/envs/limited', { max_events_per_second: 1000 })).body.data.max_events_per_second,
      1000,
      'raised over REST',
    )
    t.equal((await post(Array.from({ length: 50 }, () => ({ name: 'rate/raised', data: {} })))).status, 200)
  },
)
