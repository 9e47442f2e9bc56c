// Alerts on real Kafka and ClickHouse (issue 34, item 4) with two api processes: exactly one of them
// evaluates (the lease), so a webhook's failures fire one incident and one notification, verified
// by the `standardwebhooks` library at an HTTPS receiver (a certificate made for the test, trusted by
// the nodes through NODE_EXTRA_CA_CERTS); after a fix and a replay it resolves, once.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { eventually, postJson, tempDir } from '../helpers/server.ts'
import { auth, distributedEnv, webhookCluster } from './cluster.ts'

t.setTimeout(300_000)
const dir = await tempDir()
const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')]
execFileSync('openssl', [
  'req',
  '-x509',
  '-newkey',
  'rsa:2048',
  '-nodes',
  '-days',
  '1',
  '-subj',
  '/CN=127.0.0.1',
  '-addext',
  'subjectAltName=IP:127.0.0.1',
  '-keyout',
  keyFile,
  '-out',
  certFile,
])

let secret = ''
const received: Array<{ type: string; verified: boolean }> = []
const receiver = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, async (req, res) => {
  let text = ''
  for await (const chunk of req) text += chunk
  let verified = true
  try {
    new Webhook(secret).verify(text, req.headers as Record<string, string>)
  } catch {
    verified = false
  }
  received.push({ type: JSON.parse(text).type, verified })
  res.writeHead(200).end()
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
const endpoint = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`

const env = {
  ...distributedEnv('alerts'),
  SLUICE_PARTITIONS: '1',
  SLUICE_ALERT_EVALUATE_INTERVAL_MS: '500',
  NODE_EXTRA_CA_CERTS: certFile,
}
// Two api processes: one evaluator between them.
const { api, rest, send } = await webhookCluster(t, env, [['ingest'], ['api'], ['transformer', 'dedup'], ['sink']])

t.test('two api processes, one evaluator: one notification per transition, verified', async (t) => {
  const hook = (
    await postJson(
      `${api.url}/v1/webhooks`,
      { name: 'Failing', transform: 'function transform(evt) { return { name: "a/b", data: evt.no.such } }' },
      auth,
    )
  ).body.data
  const rule = await eventually(async () => {
    const r = await postJson(
      `${api.url}/v1/alerts`,
      { name: 'failing', webhook_id: hook.id, metric: 'failed_requests', threshold: 1, endpoint },
      auth,
    )
    return r.status === 201 ? r.body.data : undefined
  })
  secret = rule.secret
  for (let n = 0; n < 2; n++) await send(hook.id, { n })
  await eventually(async () => (received.some((r) => r.type === 'alert.fired') ? true : undefined), 120_000, 250)

  await fetch(`${api.url}/v1/webhooks/${hook.id}`, {
    method: 'PATCH',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ transform: 'function transform(evt) { return { name: "a/b", data: evt } }' }),
  })
  // The transformer applies the new version from the control topic: replay until both are delivered.
  await eventually(
    async () => {
      await postJson(`${api.url}/v1/webhooks/${hook.id}/requests/replay`, { status: 'failed' }, auth)
      const failed = await rest(`/v1/webhooks/${hook.id}/requests?status=failed`)
      return failed.body.data.length === 0 ? true : undefined
    },
    120_000,
    3000,
  )
  await eventually(async () => (received.some((r) => r.type === 'alert.resolved') ? true : undefined), 120_000, 250)
  await new Promise((r) => setTimeout(r, 2000)) // a second evaluator, if there were one, would post again by now
  t.same(
    received.map((r) => r.type),
    ['alert.fired', 'alert.resolved'],
    'one notification per transition',
  )
  t.ok(
    received.every((r) => r.verified),
    'each verifies with the standardwebhooks library',
  )
  const incidents = (await rest('/v1/alerts/incidents')).body.data.filter((i: any) => i.rule_id === rule.id)
  t.equal(incidents.length, 1, 'one incident')
  t.equal(incidents[0].status, 'resolved')
})
