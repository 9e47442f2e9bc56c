// npm inngest 4.x (the real package): an app synced into Sluice in production runs every behaviour
// (tests/sdk/js-suite.ts); a sync with another key fails; a garbled answer is retried with its code.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { eventually, ROOT, startServer } from '../helpers/server.ts'
import { startJsApp } from './js-app.ts'
import { api, jsAppSuite, runOf, SIGNING_KEY, type Run } from './js-suite.ts'

const run = promisify(execFile)

jsAppSuite(t, 'v4')

t.test('a sync fails, and registers nothing, when the app holds another signing key', async (t) => {
  const sluice = await startServer({ mode: 'start', flags: { signingKey: SIGNING_KEY } })
  t.teardown(() => sluice.stop())
  const other = `signkey-prod-${randomBytes(32).toString('hex')}`
  const app = await startJsApp({ major: 'v4', appId: 'intruder', baseUrl: sluice.url, signingKey: other })
  t.teardown(() => app.close())
  const synced = await api(sluice, '/v1/apps', { method: 'POST', body: JSON.stringify({ url: app.url }) })
  t.equal(synced.status, 502)
  t.equal(synced.body.code, 'SDK_SYNC_FAILED')
  t.notMatch(JSON.stringify(synced.body), /signkey-/, 'no key in the answer')
  t.same((await api(sluice, '/v1/functions')).body.data, [], 'no function registered')
  const unsigned = await fetch(`${sluice.url}/fn/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: app.url, appName: 'intruder', functions: [] }),
  })
  t.equal(unsigned.status, 401, 'an out-of-band registration without the key is refused')
})

t.test('a garbled answer retries the call with a clear code on the run, and the app recovers', async (t) => {
  const sluice = await startServer({ mode: 'dev' })
  t.teardown(() => sluice.stop())
  let garble = true
  // An app that registers itself as an SDK would, then answers its first call with something that is not JSON.
  const app = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', async () => {
      if (req.method === 'PUT') {
        const url = `http://127.0.0.1:${(app.address() as AddressInfo).port}/api/inngest`
        const fn = { id: 'garbled-fn', name: 'fn', triggers: [{ event: 'sdk/garble' }], steps: {} }
        await fetch(`${sluice.url}/fn/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-inngest-sdk': 'inngest-js:v4.24.0' },
          body: JSON.stringify({ url, appName: 'garbled', framework: 'node', functions: [fn] }),
        })
        res.end(JSON.stringify({ message: 'synced', modified: true }))
        return
      }
      if (garble) {
        garble = false
        res.writeHead(206).end('<html>proxy error</html>')
        return
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: JSON.parse(body).event.name }))
    })
  })
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve))
  t.teardown(() => app.close())
  const url = `http://127.0.0.1:${(app.address() as AddressInfo).port}/api/inngest`
  const synced = await api(sluice, '/v1/apps', { method: 'POST', body: JSON.stringify({ url }) })
  t.equal(synced.status, 200, 'synced out of band')
  t.equal(synced.body.data.sync_kind, 'out_of_band')
  await fetch(`${sluice.url}/e/any-key`, { method: 'POST', body: JSON.stringify({ name: 'sdk/garble', data: {} }) })
  const retrying = await eventually(async () => {
    const { body } = await api(sluice, '/v1/runs?function=garbled-fn')
    return body.data.find((r: Run) => r.error?.code === 'SDK_RESPONSE_INVALID')
  })
  t.match(retrying.error.message, /not JSON/)
  t.same((await runOf(sluice, 'garbled-fn', 'completed')).output, { ok: 'sdk/garble' }, 'the retry succeeds')
})

t.test('sluice dev -u URL syncs an app started after it, unsigned, and runs it', async (t) => {
  // The app's port is chosen first, so Sluice can be told its URL before the app listens.
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const port = (probe.address() as AddressInfo).port
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  const url = `http://127.0.0.1:${port}/api/inngest`
  const sluice = await startServer({ mode: 'dev', flags: { appUrls: url } })
  t.teardown(() => sluice.stop())
  await new Promise((r) => setTimeout(r, 700))
  t.same((await api(sluice, '/v1/apps')).body.data, [], 'not synced while the app is down')
  const app = await startJsApp({ major: 'v4', appId: 'dev-app', baseUrl: sluice.url, port })
  t.teardown(() => app.close())
  await eventually(async () => ((await api(sluice, '/v1/apps')).body.data.length === 1 ? true : undefined), 20_000)
  await app.send('sdk/steps', { a: 2, b: 3 })
  t.same((await runOf(sluice, 'dev-app-steps', 'completed', 'sdk/steps')).output, { sum: 8 })
})

t.test('sluice apps sync | list | remove', async (t) => {
  const sluice = await startServer({ mode: 'start', flags: { signingKey: SIGNING_KEY } })
  t.teardown(() => sluice.stop())
  const app = await startJsApp({ major: 'v4', appId: 'cli-app', baseUrl: sluice.url, signingKey: SIGNING_KEY })
  t.teardown(() => app.close())
  const env = { SLUICE_URL: sluice.url, SLUICE_SIGNING_KEY: SIGNING_KEY }
  const cli = (args: string[]) =>
    run(process.execPath, ['--no-node-snapshot', '--conditions=sluice-source', join(ROOT, 'bin/sluice.js'), ...args], {
      env: { ...process.env, ...env },
    }).then((r) => JSON.parse(r.stdout))
  t.equal((await cli(['apps', 'sync', app.url])).data.id, 'cli-app')
  t.same(
    (await cli(['apps', 'list'])).data.map((a: { id: string; url: string }) => [a.id, a.url]),
    [['cli-app', app.url]],
  )
  t.equal((await cli(['apps', 'remove', 'cli-app'])).data.id, 'cli-app')
  t.same((await api(sluice, '/v1/apps')).body.data, [])
  t.same((await api(sluice, '/v1/functions')).body.data, [], "the app's functions are gone with it")
})
