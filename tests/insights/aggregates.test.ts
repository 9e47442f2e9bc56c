// The Insights aggregates of the embedded server (GET /v1/insights/events, /run-outcomes,
// /webhook-failures): what was sent comes back counted, scoped to an environment and a range;
// a bad range is a 400 naming the field; SQL answers 404 SQL_UNAVAILABLE without ClickHouse.
import t from 'tap'
import { eventually, getJson, postJson, ROOT, startServer } from '../helpers/server.ts'
import { finishedRuns } from '../functions/fixtures/rest.ts'

const server = await startServer({ flags: { functionsFile: `${ROOT}tests/dashboard/fixtures/functions.ts` } })
t.teardown(() => server.stop())
const started = Date.now()
await postJson(`${server.url}/v1/envs`, { name: 'pr-1', branch: true })
const sent = await postJson(`${server.url}/e/dev`, [
  ...Array.from({ length: 6 }, (_, i) => ({ name: 'app/page.viewed', data: { i } })),
  ...Array.from({ length: 3 }, (_, i) => ({ name: 'app/user.signed-up', data: { i } })),
  { name: 'shop/order.placed', data: { sku: 'A1', amount: 5 } },
  // A duplicate of the first signed-up: stored, not counted.
  { name: 'app/user.signed-up', data: {}, id: 'u-1' },
  { name: 'app/user.signed-up', data: {}, id: 'u-1' },
])
const staging = await postJson(
  `${server.url}/e/dev`,
  { name: 'app/page.viewed', data: {} },
  { 'x-service-env': 'pr-1' },
)
const { body: hook } = await postJson(`${server.url}/v1/webhooks`, {
  name: 'stripe',
  transform:
    'function transform(evt) { if (!evt.type) throw new Error("no type"); return { name: evt.type, data: evt } }',
})
await postJson(hook.data.url, { id: 1 })
await postJson(hook.data.url, { id: 2 })
await postJson(hook.data.url, { type: 'stripe/ok' })
const lastId = sent.body.ids[sent.body.ids.length - 1]
await eventually(async () => ((await getJson(`${server.url}/v1/events/${lastId}`)).status === 200 ? true : undefined))
await eventually(async () =>
  (await getJson(`${server.url}/v1/events/${staging.body.ids[0]}`)).status === 200 ? true : undefined,
)
await finishedRuns(server.url, sent.body.ids[9])
await eventually(async () =>
  (await getJson(`${server.url}/v1/webhooks/${hook.data.id}/requests`)).body.data.length === 3 ? true : undefined,
)
const range = `from=${started - 60_000}&to=${Date.now() + 60_000}`

t.test('events per minute by name: the events sent, duplicates left out, per environment', async (t) => {
  await eventually(async () => {
    const { body } = await getJson(`${server.url}/v1/insights/events?${range}&env=production`)
    return body.data.series.some((s: { name: string }) => s.name === 'stripe/ok') ? true : undefined
  })
  const { status, body } = await getJson(`${server.url}/v1/insights/events?${range}&env=production&top=2`)
  t.equal(status, 200)
  t.equal(body.data.bucket_ms, 60_000)
  t.same(
    body.data.series.map((s: { name: string; total: number }) => [s.name, s.total]),
    [
      ['app/page.viewed', 6],
      ['app/user.signed-up', 4],
    ],
  )
  t.equal(body.data.other.total, 3, "shop/order.placed, stripe/ok and the failed run's sluice/function.failed, summed")
  const sum = (counts: number[]) => counts.reduce((a, b) => a + b, 0)
  t.equal(sum(body.data.series[0].counts), 6, 'the buckets add up to the total')
  t.equal(body.data.buckets.length, body.data.series[0].counts.length)
  const all = await getJson(`${server.url}/v1/insights/events?${range}`)
  t.equal(all.body.data.series[0].total, 7, 'every environment: the branch page view too')
  const one = await getJson(`${server.url}/v1/insights/events?${range}&name=app/user.signed-up`)
  t.same(
    one.body.data.series.map((s: { name: string }) => s.name),
    ['app/user.signed-up'],
  )
})

t.test('run outcomes by function, failed webhook requests by code', async (t) => {
  const runs = await getJson(`${server.url}/v1/insights/run-outcomes?${range}&env=production`)
  t.equal(runs.status, 200)
  t.same(runs.body.data.rows, [{ function_id: 'shop-checkout', status: 'failed', count: 1 }])
  const failures = await getJson(`${server.url}/v1/insights/webhook-failures?${range}`)
  t.same(failures.body.data.rows, [
    { webhook_id: hook.data.id, webhook_name: 'stripe', code: 'TRANSFORM_THREW', count: 2 },
  ])
  const elsewhere = await getJson(`${server.url}/v1/insights/webhook-failures?${range}&env=pr-1`)
  t.same(elsewhere.body.data.rows, [], "pr-1 has no webhooks: production's failures are not its own")
})

t.test('a range backwards or over 31 days is a 400 naming the field; the default is the last hour', async (t) => {
  const backwards = await getJson(`${server.url}/v1/insights/events?from=2000&to=1000`)
  t.match(backwards, {
    status: 400,
    body: { code: 'REQUEST_INVALID', error: /^query\.from: must be before query\.to/ },
  })
  const long = await getJson(`${server.url}/v1/insights/run-outcomes?from=0&to=${40 * 86_400_000}`)
  t.match(long, { status: 400, body: { code: 'REQUEST_INVALID', error: /^query\.from: .*31 days/ } })
  const bad = await getJson(`${server.url}/v1/insights/webhook-failures?to=yesterday`)
  t.match(bad, { status: 400, body: { code: 'REQUEST_INVALID', error: /^query\.to: / } })
  const { body } = await getJson(`${server.url}/v1/insights/events`)
  t.equal(body.data.to - body.data.from, 3_600_000)
  t.ok(Math.abs(body.data.to - Date.now()) < 10_000, 'ends now')
  const week = await getJson(`${server.url}/v1/insights/events?from=${Date.now() - 7 * 86_400_000}`)
  t.equal(week.body.data.bucket_ms, 3_600_000, 'a week in hours')
})

t.test('SQL needs ClickHouse: the embedded server answers 404 SQL_UNAVAILABLE and says so', async (t) => {
  const { body: info } = await getJson(`${server.url}/v1/insights`)
  t.equal(info.data.sql, null)
  const { status, body } = await postJson(`${server.url}/v1/insights/query`, { sql: 'SELECT 1' })
  t.match([status, body.code, body.error], [404, 'SQL_UNAVAILABLE', /distributed|ClickHouse/])
  const invalid = await postJson(`${server.url}/v1/insights/query`, { sql: 'SELECT 1', extra: true })
  t.match([invalid.status, invalid.body.code], [400, 'REQUEST_INVALID'])
})
