// The HTTP items of defect 7 of issue 9: the Bearer scheme is case-insensitive, a bodiless
// request with a JSON Content-Type is not a JSON error, and the dev server answers only to
// names a DNS-rebinding page cannot borrow.
import t from 'tap'
import { startServer, TEST_SIGNING_KEY } from '../helpers/server.ts'
import { rawRequest } from '../helpers/raw-http.ts'

t.test('sluice start', async (t) => {
  const server = await startServer({ mode: 'start' })
  t.teardown(() => server.stop())

  t.test('the Authorization scheme is case-insensitive', async (t) => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const response = await fetch(`${server.url}/v1/envs`, {
        headers: { authorization: `${scheme} ${TEST_SIGNING_KEY}` },
      })
      t.equal(response.status, 200, scheme)
    }
    for (const wrong of [
      `Basic ${TEST_SIGNING_KEY}`,
      `Bearer${TEST_SIGNING_KEY}`,
      TEST_SIGNING_KEY,
      `Bearer ${TEST_SIGNING_KEY}x`,
    ]) {
      const response = await fetch(`${server.url}/v1/envs`, { headers: { authorization: wrong } })
      t.same([response.status, (await response.json()).code], [401, 'UNAUTHORIZED'], wrong.slice(0, 8))
    }
  })

  t.test('DELETE with Content-Type: application/json and no body is served', async (t) => {
    const auth = { authorization: `Bearer ${TEST_SIGNING_KEY}` }
    const created = await (
      await fetch(`${server.url}/v1/keys`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{"env":"production"}',
      })
    ).json()
    const response = await fetch(`${server.url}/v1/keys/${created.data.id}`, {
      method: 'DELETE',
      headers: { ...auth, 'content-type': 'application/json' },
    })
    t.equal(response.status, 200)
    t.equal((await response.json()).data.id, created.data.id)
  })

  t.test('sluice start does not check Host: its REST API is closed without the signing key', async (t) => {
    const response = await rawRequest(
      server.url,
      'GET /healthz HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n',
    )
    t.equal(response.status, 200)
  })
})

t.test('sluice dev answers only to loopback names, IP addresses, its host and the allowed names', async (t) => {
  const server = await startServer({ flags: { allowedHosts: 'sluice.internal,Compose-Name' } })
  t.teardown(() => server.stop())
  const get = (host: string) =>
    rawRequest(server.url, `GET /v1/envs HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
  const allowed = [
    'localhost:8288',
    'LOCALHOST',
    'app.localhost:3000',
    '127.0.0.1:8288',
    '[::1]:8288',
    '10.1.2.3',
    'sluice.internal',
    'compose-name:8288',
  ]
  // Twice: the second time each is a Host header the guard has let through before.
  for (const host of [...allowed, ...allowed]) t.equal((await get(host)).status, 200, host)
  for (const host of [
    'evil.example',
    'evil.example:8288',
    'localhost.evil.example',
    '127.0.0.1.nip.io',
    'sluice.internal.evil.example',
  ]) {
    const response = await get(host)
    t.same([response.status, response.json.code], [403, 'HOST_NOT_ALLOWED'], host)
  }
  t.same(
    (await get('evil.example')).json.error,
    'host: "evil.example" is not a name this dev server answers to; add it with --allowed-hosts / SLUICE_ALLOWED_HOSTS',
  )
  const event = await rawRequest(
    server.url,
    'POST /e/k HTTP/1.1\r\nHost: rebound.example\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}',
  )
  t.equal(event.json.code, 'HOST_NOT_ALLOWED', 'the Event API too')
})
