// An alert rule on a function (issue 34, item 4): failed runs over the threshold fire it, and the
// `sluice/alert.fired` event it emits triggers another function, as a pager would be; a retry of the
// failed runs that still fails keeps it open. A function that is not registered is 404.
import t from 'tap'
import { join } from 'node:path'
import { eventually, getJson, postJson, ROOT, startServer } from '../helpers/server.ts'
import { finishedRuns, sendEvent } from './fixtures/rest.ts'

const server = await startServer({
  flags: { functionsFile: join(ROOT, 'tests/functions/fixtures/alerts.ts'), alertEvaluateIntervalMs: '200' },
})
t.teardown(() => server.stop())

t.test('failed runs fire a function rule, and its event triggers a function', async (t) => {
  await eventually(async () =>
    (await getJson(`${server.url}/v1/functions`)).body.data.some((f: any) => f.id === 'alerts-charge')
      ? true
      : undefined,
  )
  const created = await postJson(`${server.url}/v1/alerts`, {
    name: 'charges failing',
    function: 'alerts-charge',
    metric: 'failed_runs',
    threshold: 1,
    window_seconds: 600,
    endpoint: 'http://127.0.0.1:9/unreachable', // the notification fails; the event is emitted regardless
  })
  t.equal(created.status, 201)
  t.same(created.body.data.target, { kind: 'function', id: 'production/alerts-charge' })
  for (let n = 0; n < 2; n++) {
    const id = await sendEvent(server.url, { name: 'billing/charge', data: { n } })
    t.equal((await finishedRuns(server.url, id))[0].status, 'failed')
  }
  const incident = await eventually(async () => {
    const r = await getJson(`${server.url}/v1/alerts/incidents?status=open`)
    return r.body.data.find((i: any) => i.rule_id === created.body.data.id)
  }, 20_000)
  t.match(incident, {
    value: 2,
    failing: '/v1/runs?function=alerts-charge&env=production&status=failed',
  })
  const paged = await eventually(async () => {
    const r = await getJson(`${server.url}/v1/runs?function=alerts-pager&status=completed`)
    return r.body.data.length > 0 ? r.body.data[0] : undefined
  }, 20_000)
  t.same(paged.output, { paged: 'sluice/alert.fired', rule: 'charges failing' })

  const missing = await postJson(`${server.url}/v1/alerts`, {
    name: 'x',
    function: 'alerts-nope',
    metric: 'failed_runs',
    threshold: 1,
    endpoint: 'https://example.com',
  })
  t.equal(missing.status, 404)
  const wrongMetric = await postJson(`${server.url}/v1/alerts`, {
    name: 'x',
    function: 'alerts-charge',
    metric: 'held_requests',
    threshold: 1,
    endpoint: 'https://example.com',
  })
  t.equal(wrongMetric.body.code, 'ALERT_RULE_INVALID')
  t.match(wrongMetric.body.error, /^metric: "held_requests" is not a function metric/)
})
