// Issue 35, item 7: /metrics (environment and function names, rates) stays off the HTTP port, which
// an Ingress may expose: sluice start serves it on the ops port, in every role, unless
// SLUICE_METRICS_LISTENER puts it on the HTTP port too, open (http) or behind the signing key
// (http-signed). sluice dev, one port for a Dev Server, serves it on its HTTP port.
import t from 'tap'
import { getJson, removeDir, startServer, TEST_SIGNING_KEY } from '../helpers/server.ts'

const metricsAt = async (url: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${url}/metrics`, { headers })
  const text = await response.text()
  return { status: response.status, text }
}
const served = (answer: { status: number; text: string }) =>
  answer.status === 200 && answer.text.includes('sluice_info{')

t.test('sluice start, by default: /metrics on the ops port only; the HTTP port answers 404', async (t) => {
  const server = await startServer({ mode: 'start' })
  t.teardown(() => server.stop().then(() => removeDir(server.dataDir)))
  t.ok(served(await metricsAt(server.opsUrl!)), 'the ops port serves it')
  t.same(await getJson(`${server.url}/metrics`), {
    status: 404,
    body: { status: 404, code: 'NOT_FOUND', error: 'GET /metrics: no such route' },
  })
  const signed = await getJson(`${server.url}/metrics`, { authorization: `Bearer ${TEST_SIGNING_KEY}` })
  t.equal(signed.status, 404, 'not even with the signing key')
  t.notOk(server.routes.includes('GET /metrics'), 'not among the HTTP routes')
})

t.test('SLUICE_METRICS_LISTENER=http: on the HTTP port too, open', async (t) => {
  const server = await startServer({ mode: 'start', env: { SLUICE_METRICS_LISTENER: 'http' } })
  t.teardown(() => server.stop().then(() => removeDir(server.dataDir)))
  t.ok(served(await metricsAt(server.url)), 'the HTTP port serves it, without a key')
  t.ok(served(await metricsAt(server.opsUrl!)), 'and the ops port still does')
})

t.test('SLUICE_METRICS_LISTENER=http-signed: on the HTTP port with the signing key only', async (t) => {
  const server = await startServer({ mode: 'start', env: { SLUICE_METRICS_LISTENER: 'http-signed' } })
  t.teardown(() => server.stop().then(() => removeDir(server.dataDir)))
  const unauthorized = { status: 401, code: 'UNAUTHORIZED', error: 'authorization: expected "Bearer <signing key>"' }
  t.same(await getJson(`${server.url}/metrics`), { status: 401, body: unauthorized }, 'no key: 401')
  const wrong = await getJson(`${server.url}/metrics`, { authorization: `Bearer ${TEST_SIGNING_KEY}x` })
  t.same(wrong, { status: 401, body: unauthorized }, 'a wrong key: 401')
  t.ok(served(await metricsAt(server.url, { authorization: `Bearer ${TEST_SIGNING_KEY}` })), 'the key: served')
  t.ok(served(await metricsAt(server.opsUrl!)), 'the ops port, inside the cluster, asks for no key')
})

t.test('sluice dev: one port, /metrics on it, and no ops listener', async (t) => {
  const server = await startServer({ mode: 'dev' })
  t.teardown(() => server.stop().then(() => removeDir(server.dataDir)))
  t.ok(served(await metricsAt(server.url)), 'the HTTP port serves it')
  t.equal(server.opsUrl, undefined, 'no ops listener')
})

t.test('a value it does not know is refused at startup, naming the setting', async (t) => {
  await t.rejects(startServer({ mode: 'start', env: { SLUICE_METRICS_LISTENER: 'public' } }), {
    code: 'CONFIG_INVALID',
    message: /metricsListener \(--metrics-listener \/ SLUICE_METRICS_LISTENER\)/,
  })
})
