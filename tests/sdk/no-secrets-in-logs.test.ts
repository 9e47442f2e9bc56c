// Keys, signatures and bodies of the SDK protocol never reach a log line: a production session with
// a real npm inngest 4.x app (sync, runs of every kind, a sync by an app holding another key, an
// unsigned /fn/register) runs with the logger at trace level into memory, then every line is searched
// for the signing key, its hashed form, every signature sent or answered, and the events' payloads.
import { Writable } from 'node:stream'
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { loadConfig } from '../../config/config.ts'
import { startEmbedded } from '../../server/embedded.ts'
import { createLogger } from '../../server/log.ts'
import { hashedSigningKey } from '../../sdk/signature.ts'
import { eventually, removeDir, tempDir } from '../helpers/server.ts'
import { startJsApp } from './js-app.ts'

const lines: string[] = []
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString().split('\n').filter(Boolean))
    done()
  },
})
const key = `signkey-prod-${randomBytes(32).toString('hex')}`
const other = `signkey-prod-${randomBytes(32).toString('hex')}`
const payload = `card-${randomBytes(8).toString('hex')}`

t.test('a session with an app logs no key, signature or body', async (t) => {
  const dataDir = await tempDir()
  const config = loadConfig('start', { port: '0', host: '127.0.0.1', dataDir, signingKey: key, logLevel: 'trace' }, {})
  const server = await startEmbedded(config, createLogger('trace', sink))
  t.teardown(async () => {
    await server.stop()
    await removeDir(dataDir)
  })
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const eventKey = (
    await (await fetch(`${server.url}/v1/keys`, { method: 'POST', headers: auth, body: '{"env":"production"}' })).json()
  ).data.key
  const app = await startJsApp({ major: 'v4', appId: 'quiet', baseUrl: server.url, signingKey: key, eventKey })
  t.teardown(() => app.close())
  const intruder = await startJsApp({ major: 'v4', appId: 'loud', baseUrl: server.url, signingKey: other })
  t.teardown(() => intruder.close())
  const sync = (url: string) =>
    fetch(`${server.url}/v1/apps`, { method: 'POST', headers: auth, body: JSON.stringify({ url }) })
  t.equal((await sync(app.url)).status, 200)
  t.equal((await sync(intruder.url)).status, 502)
  await fetch(`${server.url}/fn/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${hashedSigningKey(other)}` },
    body: JSON.stringify({ url: intruder.url, appName: 'loud', functions: [] }),
  })
  await app.send('sdk/steps', { a: 1, b: 2, secret: payload })
  await app.send('sdk/fail', { secret: payload })
  await eventually(async () => {
    const res = await fetch(`${server.url}/v1/runs?function=quiet-fail-failure&status=completed`, { headers: auth })
    return (await res.json()).data.length === 1 ? true : undefined
  }, 20_000)
  t.ok(
    lines.some((l) => l.includes('app synced')),
    'the sync is logged',
  )
  t.ok(
    lines.some((l) => l.includes('SDK_SYNC_FAILED')),
    'the refused sync is logged',
  )
  t.ok(
    lines.some((l) => l.includes('run failed')),
    'the failed run is logged',
  )
  const secrets = [
    key,
    key.replace(/^signkey-prod-/, ''),
    hashedSigningKey(key),
    other,
    hashedSigningKey(other),
    payload,
  ]
  for (const secret of secrets)
    t.same(
      lines.filter((l) => l.includes(secret)),
      [],
      `never logged: ${secret === payload ? 'an event payload' : 'a key or its hash'}`,
    )
  t.same(
    lines.filter((l) => /[?&]?s=[0-9a-f]{64}/.test(l)),
    [],
    'no signature',
  )
})
