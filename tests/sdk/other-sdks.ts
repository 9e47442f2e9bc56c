// An app of tests/sdk/apps (PyPI inngest 0.5 on Flask, or inngestgo v0.16.0) against an embedded
// Sluice: in production (signed; the behaviours of app-suite.ts), and in dev mode (`sluice dev -u`,
// unsigned, registered out of band as these SDKs do in dev).
import type { Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { eventually, startServer } from '../helpers/server.ts'
import { type SdkKind, sdkAvailable, startSdkApp } from '../helpers/sdk-app.ts'
import { appSuite } from './app-suite.ts'

export function otherSdkSuite(t: Test, kind: Extract<SdkKind, 'python' | 'go'>) {
  const skip = sdkAvailable(kind) ? false : 'not provisioned: run tests/infra/provision.sh'
  t.test(`${kind}: an app synced in production runs every behaviour`, { skip }, async (t) => {
    const key = `signkey-prod-${randomBytes(32).toString('hex')}`
    const sluice = await startServer({ mode: 'start', flags: { signingKey: key } })
    t.teardown(() => sluice.stop())
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    const created = await fetch(`${sluice.url}/v1/keys`, { method: 'POST', headers, body: '{"env":"production"}' })
    const eventKey = (await created.json()).data.key
    const app = await startSdkApp(kind, { sluiceUrl: sluice.url, dev: false, signingKey: key, eventKey })
    t.teardown(() => app.stop())
    await appSuite(t, {
      url: sluice.url,
      signingKey: key,
      eventKey,
      appId: app.appId,
      appUrl: app.url,
      onFailure: kind !== 'go',
    })
  })

  t.test(`${kind}: sluice dev -u URL syncs it unsigned, and it runs`, { skip }, async (t) => {
    const sluice = await startServer({ mode: 'dev' })
    t.teardown(() => sluice.stop())
    const app = await startSdkApp(kind, { sluiceUrl: sluice.url, dev: true })
    t.teardown(() => app.stop())
    const synced = await fetch(`${sluice.url}/v1/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: app.url }),
    })
    const body = await synced.json()
    t.equal(synced.status, 200, JSON.stringify(body).slice(0, 300))
    t.equal(body.data.url, app.url, 'the URL Sluice synced')
    await fetch(`${sluice.url}/e/dev`, {
      method: 'POST',
      body: JSON.stringify({ name: 'sdk/steps', data: { a: 4, b: 5 } }),
    })
    const run = await eventually(
      async () => {
        const res = await fetch(`${sluice.url}/v1/runs?function=${app.appId}-steps&status=completed`)
        return (await res.json()).data[0]
      },
      30_000,
      100,
    )
    t.same(run.output, { sum: 9 })
  })
}
