// Syncs that cannot be: a host outside SLUICE_APP_HOSTS, a URL that is not http(s), an app that does
// not answer, an environment that does not exist. Each answers its code naming the cause, and nothing
// is registered.
import t from 'tap'
import { postJson, getJson, startServer } from '../helpers/server.ts'

t.test('refused syncs change nothing', async (t) => {
  const server = await startServer({ flags: { appHosts: 'apps.internal:3000' } })
  t.teardown(() => server.stop())
  const sync = (body: unknown) => postJson(`${server.url}/v1/apps`, body)
  const host = await sync({ url: 'http://127.0.0.1:9/api/inngest' })
  t.equal(host.status, 400)
  t.equal(host.body.code, 'SDK_HOST_REFUSED')
  t.match(host.body.error, /127\.0\.0\.1:9 is not in SLUICE_APP_HOSTS/)
  const scheme = await sync({ url: 'ftp://apps.internal:3000/x' })
  t.equal(scheme.status, 400)
  t.equal(scheme.body.code, 'REQUEST_INVALID')
  t.match(scheme.body.error, /^url: /)
  const gone = await sync({ url: 'http://apps.internal:3000/api/inngest' })
  t.equal(gone.status, 502, 'an app that does not answer')
  t.equal(gone.body.code, 'SDK_SYNC_FAILED')
  t.same((await getJson(`${server.url}/v1/apps`)).body.data, [])
  t.same((await getJson(`${server.url}/v1/functions`)).body.data, [])
})

t.test('a registration into an environment that does not exist is refused', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())
  const res = await fetch(`${server.url}/fn/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-inngest-env': 'nowhere' },
    body: JSON.stringify({ url: 'http://127.0.0.1:3000/api/inngest', appName: 'shop', functions: [] }),
  })
  t.equal(res.status, 404)
  t.equal((await res.json()).code, 'ENV_NOT_FOUND')
  t.same((await getJson(`${server.url}/v1/apps`)).body.data, [])
})
