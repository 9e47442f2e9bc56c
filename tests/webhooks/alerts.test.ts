// Alerts (issue 34, item 4) on an embedded server: a rule on a webhook fires when its failed requests
// pass the threshold and resolves once they are replayed after a fix; each transition is posted to a
// real local HTTP receiver that verifies the Standard Webhooks signature with the `standardwebhooks`
// library, and emitted as a `sluice/alert.*` event. A paused webhook holding too much fires too. An
// endpoint that keeps failing is retried, counted and shown. Bad rules are 400 naming the field.
import t from 'tap'
import { execFile } from 'node:child_process'
import { createServer, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { eventually, getJson, postJson, ROOT, startServer } from '../helpers/server.ts'
import { createWebhook, deliver, outcome, patchWebhook } from './helpers.ts'

interface Received {
  body: any
  verified: boolean
  id: string
}

/** A receiver as a user would write one: it verifies every notification with the secret it was shown. */
async function receiver(status = 200) {
  const received: Received[] = []
  let secret = ''
  const server = createServer(async (req: IncomingMessage, res) => {
    let text = ''
    for await (const chunk of req) text += chunk
    let verified = true
    try {
      new Webhook(secret).verify(text, req.headers as Record<string, string>)
    } catch {
      verified = false
    }
    received.push({ body: JSON.parse(text), verified, id: String(req.headers['webhook-id']) })
    res.writeHead(status).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/alerts`,
    received,
    useSecret: (s: string) => {
      secret = s
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

const server = await startServer({ flags: { alertEvaluateIntervalMs: '200' } })
t.teardown(() => server.stop())

const broken = 'function transform(evt) { return { name: "shop/" + evt.kind, data: evt.missing.field } }'
const fixed = 'function transform(evt) { return { name: "shop/" + evt.kind, data: evt } }'

t.test('a failure-count rule fires, then resolves after replay; both notifications verify', async (t) => {
  const rx = await receiver()
  t.teardown(rx.close)
  const hook = await createWebhook(server.url, { name: 'Alerting', transform: broken })
  const created = await postJson(`${server.url}/v1/alerts`, {
    name: 'shop failing',
    webhook_id: hook.id,
    metric: 'failed_requests',
    threshold: 2,
    window_seconds: 300,
    endpoint: rx.url,
  })
  t.equal(created.status, 201)
  const rule = created.body.data
  t.match(rule.secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'a Standard Webhooks secret, shown once')
  rx.useSecret(rule.secret)
  const shown = await getJson(`${server.url}/v1/alerts/${rule.id}`)
  t.notOk('secret' in shown.body.data, 'never shown again')
  t.equal(shown.body.data.endpoint, new URL(rx.url).origin, 'the endpoint path (a token, for Slack) is not shown')

  const ids: string[] = []
  for (let n = 0; n < 3; n++) ids.push((await deliver(hook.url, { kind: 'order', n })).body.request_id)
  for (const id of ids) t.equal((await outcome(server.url, hook.id, id)).status, 'failed')

  const fired = await eventually(async () => rx.received.find((r) => r.body.type === 'alert.fired'), 20_000)
  t.equal(fired.verified, true, 'the fired notification verifies with the standardwebhooks library')
  t.match(fired.body.data, {
    rule: { id: rule.id, metric: 'failed_requests', threshold: 2 },
    incident: { status: 'open', value: 3 },
  })
  const open = await getJson(`${server.url}/v1/alerts/incidents?status=open`)
  const incident = open.body.data.find((i: any) => i.rule_id === rule.id)
  t.match(incident, { status: 'open', value: 3, failing: `/v1/webhooks/${hook.id}/requests?status=failed` })
  await eventually(async () => {
    const r = await getJson(`${server.url}/v1/alerts/incidents`)
    return r.body.data.find((i: any) => i.id === incident.id)?.notification.status === 'delivered' ? true : undefined
  })

  const event = await eventually(async () => {
    const r = await getJson(`${server.url}/v1/events?name=sluice/alert.fired`)
    return r.body.data.find((e: any) => e.data.incident.id === incident.id)
  })
  t.equal(event.data.rule.id, rule.id, 'sluice/alert.fired is an event functions can be triggered by')

  await patchWebhook(server.url, hook.id, { transform: fixed })
  t.equal((await postJson(`${server.url}/v1/webhooks/${hook.id}/requests/replay`, { status: 'failed' })).status, 202)
  const resolved = await eventually(async () => rx.received.find((r) => r.body.type === 'alert.resolved'), 20_000)
  t.equal(resolved.verified, true)
  t.match(resolved.body.data.incident, { id: incident.id, status: 'resolved', value: 0 })
  t.not(resolved.id, fired.id, 'each notification has its own webhook-id')
  const after = (await getJson(`${server.url}/v1/alerts/incidents`)).body.data.find((i: any) => i.id === incident.id)
  t.equal(after.status, 'resolved')
  t.type(after.resolved_at, 'string')
  await eventually(async () => {
    const r = await getJson(`${server.url}/v1/events?name=sluice/alert.resolved`)
    return r.body.data.find((e: any) => e.data.incident.id === incident.id)
  })
  t.equal(rx.received.length, 2, 'one notification per transition')
})

t.test('a paused webhook holding more than N fires; resume resolves it', async (t) => {
  const rx = await receiver()
  t.teardown(rx.close)
  const hook = await createWebhook(server.url, { name: 'Held', transform: fixed })
  const rule = (
    await postJson(`${server.url}/v1/alerts`, {
      name: 'held too long',
      webhook_id: hook.id,
      metric: 'held_requests',
      threshold: 1,
      endpoint: rx.url,
    })
  ).body.data
  rx.useSecret(rule.secret)
  await postJson(`${server.url}/v1/webhooks/${hook.id}/pause`, {})
  for (let n = 0; n < 2; n++) await deliver(hook.url, { kind: 'held', n })
  const fired = await eventually(async () => rx.received.find((r) => r.body.type === 'alert.fired'), 20_000)
  t.equal(fired.verified, true)
  t.equal(fired.body.data.incident.value, 2)
  await postJson(`${server.url}/v1/webhooks/${hook.id}/resume`, {})
  const resolved = await eventually(async () => rx.received.find((r) => r.body.type === 'alert.resolved'), 20_000)
  t.equal(resolved.body.data.incident.value, 0)
})

t.test('an endpoint that keeps failing is retried with backoff, counted and shown; nothing else waits', async (t) => {
  const rx = await receiver(500)
  t.teardown(rx.close)
  const hook = await createWebhook(server.url, { name: 'Down receiver', transform: broken })
  const rule = (
    await postJson(`${server.url}/v1/alerts`, {
      name: 'down',
      webhook_id: hook.id,
      metric: 'failed_requests',
      threshold: 0,
      endpoint: rx.url,
    })
  ).body.data
  rx.useSecret(rule.secret)
  await deliver(hook.url, { kind: 'x' })
  const failed = await eventually(async () => {
    const r = await getJson(`${server.url}/v1/alerts/incidents`)
    const i = r.body.data.find((x: any) => x.rule_id === rule.id)
    return i?.notification.status === 'failed' ? i : undefined
  }, 30_000)
  t.equal(failed.notification.attempts, 5, 'the first attempt and 4 retries')
  t.equal(failed.notification.error, 'the endpoint answered 500')
  t.equal(rx.received.length, 5)
  t.ok(
    rx.received.every((r) => r.id === rx.received[0].id && r.verified),
    'every retry signed, with the same webhook-id',
  )
  const metrics = await (await fetch(`${server.url}/metrics`)).text()
  t.match(metrics, /sluice_alert_notifications_total\{outcome="failed"\} [1-9]/)
  t.match(metrics, /sluice_alert_notifications_total\{outcome="retried"\} [1-9]/)
  // Ingestion went on meanwhile.
  const sent = await deliver(hook.url, { kind: 'y' })
  t.equal(sent.status, 200)
})

t.test('bad rules are 400 ALERT_RULE_INVALID naming the field, and create nothing', async (t) => {
  const hook = await createWebhook(server.url, { name: 'Bad rules' })
  const base = {
    name: 'bad',
    webhook_id: hook.id,
    metric: 'failed_requests',
    threshold: 1,
    endpoint: 'https://example.com/x',
  }
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['unknown metric', { metric: 'cpu' }, /^metric: "cpu" is not a webhook metric/],
    ['function metric on a webhook', { metric: 'failed_runs' }, /^metric:/],
    ['non-HTTPS endpoint', { endpoint: 'http://example.com/x' }, /^endpoint: must be an https:\/\/ URL/],
    ['not a URL', { endpoint: 'nope' }, /^endpoint: "nope" is not an absolute URL/],
    ['window too short', { window_seconds: 10 }, /^window_seconds: from 60 to 86400, got 10/],
    ['window too long', { window_seconds: 90_000 }, /^window_seconds:/],
    ['negative count', { threshold: -1 }, /^threshold: a count is a whole number/],
    ['fractional count', { threshold: 1.5 }, /^threshold: a count is a whole number/],
    ['rate above 1', { metric: 'failure_rate', threshold: 2 }, /^threshold: a rate is between 0 and 1/],
    ['both targets', { function: 'app-fn' }, /^webhook_id: give either webhook_id or function/],
  ]
  const before = (await getJson(`${server.url}/v1/alerts`)).body.data.length
  for (const [what, patch, message] of cases) {
    const r = await postJson(`${server.url}/v1/alerts`, { ...base, ...patch })
    t.equal(r.status, 400, what)
    t.equal(r.body.code, 'ALERT_RULE_INVALID', what)
    t.match(r.body.error, message, what)
  }
  t.equal((await getJson(`${server.url}/v1/alerts`)).body.data.length, before, 'nothing was created')
  const unknown = await postJson(`${server.url}/v1/alerts`, { ...base, webhook_id: 'wh_nope' })
  t.equal(unknown.status, 404)
})

t.test('sluice start refuses a loopback http:// endpoint that sluice dev accepts', async (t) => {
  const prod = await startServer({ mode: 'start' })
  t.teardown(() => prod.stop())
  const headers = { authorization: 'Bearer test-signing-key-0123456789' }
  const hook = (await postJson(`${prod.url}/v1/webhooks`, { name: 'prod' }, headers)).body.data
  const r = await postJson(
    `${prod.url}/v1/alerts`,
    { name: 'x', webhook_id: hook.id, metric: 'failed_requests', threshold: 1, endpoint: 'http://127.0.0.1:9/x' },
    headers,
  )
  t.equal(r.status, 400)
  t.match(r.body.error, /^endpoint: http:\/\/ to a loopback address is accepted by `sluice dev` only/)
})

t.test('sluice alerts create prints the secret once; list, incidents and delete work from the CLI', async (t) => {
  const run = promisify(execFile)
  const sluice = (args: string[]) =>
    run(process.execPath, ['--no-node-snapshot', '--conditions=sluice-source', join(ROOT, 'bin/sluice.js'), ...args])
  const hook = await createWebhook(server.url, { name: 'CLI' })
  const created = JSON.parse(
    (
      await sluice([
        'alerts',
        'create',
        'cli rule',
        '--webhook',
        hook.id,
        '--metric',
        'failure_rate',
        '--threshold',
        '0.5',
        '--window',
        '600',
        '--endpoint',
        'https://example.com/hook',
        '--url',
        server.url,
      ])
    ).stdout,
  )
  t.match(created.data, { name: 'cli rule', metric: 'failure_rate', threshold: 0.5, window_seconds: 600 })
  t.match(created.data.secret, /^whsec_/)
  const listed = JSON.parse((await sluice(['alerts', 'list', '--url', server.url])).stdout)
  t.ok(listed.data.some((r: any) => r.id === created.data.id && !('secret' in r)))
  const incidents = JSON.parse((await sluice(['alerts', 'incidents', '--status', 'open', '--url', server.url])).stdout)
  t.ok(Array.isArray(incidents.data))
  await sluice(['alerts', 'delete', created.data.id, '--url', server.url])
  t.equal((await getJson(`${server.url}/v1/alerts/${created.data.id}`)).status, 404)
})
