// /healthz and /readyz of an HTTP process (embedded): ready once started; on stop, 503 with its
// reason first, during the shutdown delay, while requests are still served.
import t from 'tap'
import { startServer, getJson, postJson, removeDir } from '../helpers/server.ts'

t.test('ready once started; 503 "shutting down" during the shutdown delay, requests still served', async (t) => {
  const server = await startServer({ flags: { shutdownDelayMs: '800' } })
  t.teardown(() => removeDir(server.dataDir))
  t.same(await getJson(`${server.url}/healthz`), { status: 200, body: { status: 'ok' } })
  t.same(await getJson(`${server.url}/readyz`), { status: 200, body: { status: 'ready' } })
  const stopped = server.stop()
  t.same(await getJson(`${server.url}/readyz`), {
    status: 503,
    body: { status: 'not_ready', reasons: { process: 'shutting down' } },
  })
  t.equal(
    (await postJson(`${server.url}/e/any`, { name: 'ops/late', data: {} })).status,
    200,
    'still accepting during the delay',
  )
  await stopped
  await t.rejects(fetch(`${server.url}/healthz`), 'the listener is closed after the drain')
})

t.test(
  'sluice start: the probes on the HTTP port and on the ops port, which answers until the stages stopped',
  async (t) => {
    const server = await startServer({ mode: 'start', flags: { shutdownDelayMs: '800' } })
    t.teardown(() => removeDir(server.dataDir))
    t.ok(server.opsUrl, 'an ops listener beside the HTTP one')
    for (const base of [server.url, server.opsUrl!]) {
      t.same(await getJson(`${base}/healthz`), { status: 200, body: { status: 'ok' } }, `${base}/healthz`)
      t.same(await getJson(`${base}/readyz`), { status: 200, body: { status: 'ready' } }, `${base}/readyz`)
    }
    const stopped = server.stop()
    const shuttingDown = { status: 503, body: { status: 'not_ready', reasons: { process: 'shutting down' } } }
    t.same(await getJson(`${server.opsUrl}/readyz`), shuttingDown, 'the ops port says so too')
    await stopped
    await t.rejects(fetch(`${server.opsUrl}/healthz`), 'the ops listener is closed last')
  },
)
