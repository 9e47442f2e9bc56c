// Issue 9, security at the edge: every kind of key writes only where it belongs; the REST
// API (and so the dashboard's data) is closed without the signing key on every route; IP
// lists believe X-Forwarded-For only from a trusted proxy; CORS is open only in dev; rate
// limits answer 429 with Retry-After.
import t from 'tap'
import { startServer, TEST_SIGNING_KEY, postJson, getJson, eventually } from '../helpers/server.ts'
import { PUBLIC_ROUTES, isPublicRoute } from '../helpers/public-routes.ts'

t.test('sluice start', async (t) => {
  const server = await startServer({ mode: 'start' })
  t.teardown(() => server.stop())
  const auth = { authorization: `Bearer ${TEST_SIGNING_KEY}` }
  const create = async (path: string, body: unknown) => {
    const r = await postJson(`${server.url}${path}`, body, auth)
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`)
    return r.body.data
  }
  await create('/v1/envs', { name: 'staging' })
  await create('/v1/envs', { name: 'feature-a', branch: true })
  await create('/v1/envs', { name: 'limited', max_events_per_second: 5 })
  const keys = {
    production: (await create('/v1/keys', { env: 'production' })).key as string,
    staging: (await create('/v1/keys', { env: 'staging' })).key as string,
    branch: (await create('/v1/keys', { env: 'branch' })).key as string,
    limited: (await create('/v1/keys', { env: 'limited' })).key as string,
  }
  const send = (key: string, headers: Record<string, string> = {}) =>
    postJson(`${server.url}/e/${key}`, { name: 'sec/test', data: {} }, headers)
  const envOf = async (id: string) =>
    eventually(async () => {
      const r = await getJson(`${server.url}/v1/events/${id}`, auth)
      return r.status === 200 ? r.body.data.env : undefined
    })

  t.test('a key of a non-branch environment writes there, whatever x-service-env says', async (t) => {
    for (const [kind, env] of [
      ['production', 'production'],
      ['staging', 'staging'],
    ] as const) {
      for (const header of [undefined, 'production', 'staging', 'feature-a', 'nope']) {
        const r = await send(keys[kind], header ? { 'x-service-env': header } : {})
        t.equal(r.status, 200, `${kind} key, x-service-env ${header}`)
        t.equal(await envOf(r.body.ids[0]), env)
      }
    }
  })

  t.test('a branch-group key writes only to an active branch environment it names', async (t) => {
    const ok = await send(keys.branch, { 'x-service-env': 'feature-a' })
    t.equal(await envOf(ok.body.ids[0]), 'feature-a')
    t.same((await send(keys.branch)).body.code, 'ENV_REQUIRED')
    for (const env of ['production', 'staging', 'nope', 'branch']) {
      const r = await send(keys.branch, { 'x-service-env': env })
      t.same([r.status, r.body.code], [404, 'ENV_NOT_FOUND'], env)
    }
    await postJson(`${server.url}/v1/envs/feature-a/archive`, {}, auth)
    t.same((await send(keys.branch, { 'x-service-env': 'feature-a' })).body.code, 'ENV_NOT_FOUND', 'archived')
  })

  t.test('a revoked key, the signing key, or a key one character off is refused as an event key', async (t) => {
    const made = await create('/v1/keys', { env: 'production' })
    await fetch(`${server.url}/v1/keys/${made.id}`, { method: 'DELETE', headers: auth })
    for (const key of [made.key, TEST_SIGNING_KEY, `${keys.production}x`, keys.production.slice(0, -1)]) {
      t.same((await send(key)).body, { status: 401, code: 'KEY_INVALID', error: 'event key: unknown or revoked' })
    }
  })

  t.test('every REST route but the public ones is closed without the signing key', async (t) => {
    // The API reference (/docs, @fastify/swagger-ui) is public, like the document it renders.
    const closed = server.routes.filter((r) => !isPublicRoute(r) && !r.includes(' /e'))
    t.ok(closed.length >= 20, `${closed.length} closed routes`)
    const wrong = [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      `Bearer ${TEST_SIGNING_KEY}x`,
      `Bearer ${TEST_SIGNING_KEY.slice(1)}`,
      `Basic ${TEST_SIGNING_KEY}`,
      `Bearer ${keys.production}`,
      TEST_SIGNING_KEY,
    ]
    for (const route of closed) {
      const [method, pattern] = route.split(' ')
      const url = pattern.replace(/:[a-z]+/g, 'x')
      for (const authorization of wrong) {
        const response = await server.inject({
          method: method as 'GET',
          url,
          headers: authorization === undefined ? {} : { authorization },
          payload: method === 'GET' ? undefined : {},
        })
        if (response.statusCode !== 401 || response.json().code !== 'UNAUTHORIZED')
          t.fail(`${route} with ${JSON.stringify(authorization)}: ${response.statusCode} ${response.body}`)
      }
    }
    for (const route of PUBLIC_ROUTES) {
      const [method, pattern] = route.split(' ')
      const answer = await server.inject({ method: method as 'GET', url: pattern.replace(':file', 'index.html') })
      // Signing in asks for no credential; without a body it is a 400 naming the field, not a 401.
      const open = method === 'POST' ? answer.statusCode === 400 : answer.statusCode < 400
      t.ok(open, `${route} is public`)
    }
  })

  t.test('no CORS headers outside dev, on the Event API or the REST API', async (t) => {
    const event = await fetch(`${server.url}/e/${keys.production}`, {
      method: 'POST',
      headers: { origin: 'https://evil.example' },
      body: '{"name":"a/b","data":{}}',
    })
    t.equal(event.headers.get('access-control-allow-origin'), null)
    const preflight = await fetch(`${server.url}/e/${keys.production}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    })
    t.equal(preflight.headers.get('access-control-allow-origin'), null)
    t.equal(preflight.status, 404)
    const rest = await fetch(`${server.url}/v1/envs`, { headers: { ...auth, origin: 'https://evil.example' } })
    t.equal(rest.headers.get('access-control-allow-origin'), null)
  })

  t.test('past an environment rate limit: 429 RATE_LIMITED with Retry-After, nothing accepted', async (t) => {
    const batch = Array.from({ length: 5 }, () => ({ name: 'a/b', data: {} }))
    t.equal((await postJson(`${server.url}/e/${keys.limited}`, batch)).status, 200)
    const limited = await postJson(`${server.url}/e/${keys.limited}`, { name: 'a/b', data: {} })
    t.same([limited.status, limited.body.code], [429, 'RATE_LIMITED'])
    t.match(limited.headers.get('retry-after'), /^[1-9]\d*$/)
    t.equal(limited.body.ids, undefined)
  })
})

t.test('sluice dev: CORS is open on the Event API only', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())
  const preflight = await fetch(`${server.url}/e/any`, {
    method: 'OPTIONS',
    headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'POST' },
  })
  t.same([preflight.status, preflight.headers.get('access-control-allow-origin')], [204, '*'])
  const event = await fetch(`${server.url}/e/any`, {
    method: 'POST',
    headers: { origin: 'http://localhost:3000' },
    body: '{"name":"a/b","data":{}}',
  })
  t.same([event.status, event.headers.get('access-control-allow-origin')], [200, '*'])
  const rest = await fetch(`${server.url}/v1/envs`, { headers: { origin: 'http://localhost:3000' } })
  t.equal(rest.headers.get('access-control-allow-origin'), null, 'the open REST API is not readable cross-origin')
})

t.test('IP lists believe X-Forwarded-For only from a trusted proxy', async (t) => {
  for (const [trustProxy, expected] of [
    [undefined, 403],
    ['127.0.0.1/32', 200],
  ] as const) {
    const server = await startServer({ flags: trustProxy ? { trustProxy } : {} })
    const hook = (await postJson(`${server.url}/v1/webhooks`, { name: 'Listed', allow_ips: ['203.0.113.0/24'] })).body
      .data
    const response = await postJson(hook.url, {}, { 'x-forwarded-for': '203.0.113.7' })
    t.equal(response.status, expected, `trust proxy ${trustProxy ?? 'none'}`)
    const spoofedChain = await postJson(hook.url, {}, { 'x-forwarded-for': '203.0.113.7, 198.51.100.1' })
    t.equal(spoofedChain.status, 403, 'a hop the proxy saw outside the list is refused')
    await server.stop()
  }
})
