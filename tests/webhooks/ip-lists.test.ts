// IP allow/deny lists at ingest, over real sockets: the client IP is the socket's unless the
// peer is a configured trusted proxy, so a spoofed X-Forwarded-For gets nowhere.
import t from 'tap'
import { startServer } from '../helpers/server.ts'
import { createWebhook, deliver, outcome } from './helpers.ts'

t.test('without a trusted proxy', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())

  t.test('a spoofed X-Forwarded-For naming an allowed address is refused with 403', async (t) => {
    const hook = await createWebhook(server.url, { name: 'GitHub', allow_ips: ['192.30.252.0/22', '2001:db8::/32'] })
    const spoofed = await deliver(hook.url, { zen: 'hi' }, { 'x-forwarded-for': '192.30.252.10' })
    t.same([spoofed.status, spoofed.body.code], [403, 'IP_DENIED'])
    t.match(spoofed.body.error, /127\.0\.0\.1/, 'judged on the socket address')
  })

  t.test('the socket address on the allow list passes, and is what is recorded', async (t) => {
    const hook = await createWebhook(server.url, { name: 'Local', allow_ips: ['127.0.0.0/8'] })
    const response = await deliver(hook.url, { ok: true }, { 'x-forwarded-for': '198.51.100.1' })
    t.equal(response.status, 200)
    t.equal((await outcome(server.url, hook.id, response.body.request_id)).request.ip, '127.0.0.1')
  })

  t.test('the deny list wins over the allow list', async (t) => {
    const hook = await createWebhook(server.url, {
      name: 'Denied',
      allow_ips: ['127.0.0.0/8'],
      deny_ips: ['127.0.0.1'],
    })
    t.equal((await deliver(hook.url, {})).status, 403)
  })
})

t.test('with a trusted proxy configured', async (t) => {
  const server = await startServer({ flags: { trustProxy: '127.0.0.1' } })
  t.teardown(() => server.stop())
  const hook = await createWebhook(server.url, {
    name: 'Behind proxy',
    allow_ips: ['192.30.252.0/22', '2001:db8::/32'],
    deny_ips: ['192.30.253.0/24'],
  })

  t.test("the proxy's X-Forwarded-For decides: an allowed client passes and is recorded", async (t) => {
    const response = await deliver(hook.url, { zen: 'hi' }, { 'x-forwarded-for': '192.30.252.10' })
    t.equal(response.status, 200)
    t.equal((await outcome(server.url, hook.id, response.body.request_id)).request.ip, '192.30.252.10')
  })

  t.test('a client outside the allow list, or on the deny list, is refused', async (t) => {
    t.equal((await deliver(hook.url, {}, { 'x-forwarded-for': '203.0.113.7' })).status, 403)
    t.equal((await deliver(hook.url, {}, { 'x-forwarded-for': '192.30.253.4' })).status, 403)
  })

  t.test('IPv6 clients are matched against IPv6 CIDR blocks', async (t) => {
    t.equal((await deliver(hook.url, {}, { 'x-forwarded-for': '2001:db8:85a3::8a2e:370:7334' })).status, 200)
    t.equal((await deliver(hook.url, {}, { 'x-forwarded-for': '2001:db9::1' })).status, 403)
  })

  t.test('only the address the trusted proxy saw counts: a client-supplied hop in front of it does not', async (t) => {
    // The client sent "X-Forwarded-For: 192.30.252.10"; the proxy appended the real client 203.0.113.7.
    t.equal((await deliver(hook.url, {}, { 'x-forwarded-for': '192.30.252.10, 203.0.113.7' })).status, 403)
  })
})
