// Event schemas in distributed mode (docs/schemas.md): versions are registered in the real schema
// registry (Apicurio, a JSON subject per environment and name, BACKWARD), whose checker refuses an
// incompatible one; the control topic carries each version to every node, so a second ingest node
// enforces it; warn mode's violations reach ClickHouse through the Avro topics.
import t from 'tap'
import { eventually, getJson, postJson } from '../helpers/server.ts'
import { testRegistryUrl } from '../infra/services.ts'
import { parseMetrics } from '../ops/metrics-scrape.ts'
import { subjectOf } from '../../control/schemas-registry.ts'
import { deliver } from '../webhooks/helpers.ts'
import { BASICS } from '../functions/fixtures/rest.ts'
import { auth, distributedEnv, startNode } from './cluster.ts'

t.setTimeout(300_000)
const registryUrl = testRegistryUrl()
const env: NodeJS.ProcessEnv = { ...distributedEnv('schemas'), SLUICE_SCHEMA_REGISTRY_URL: registryUrl }
const all = await startNode(['all'], env, [], 'start', { startTimeoutMs: 120_000 })
t.teardown(() => all.kill())
const ingest = await startNode(['ingest'], env, [], 'start', { startTimeoutMs: 120_000 })
t.teardown(() => ingest.kill())
// Serves the fixture's `sender` (step.sendEvent of test/notified); its own process, as in production.
const runner = await startNode(['runner'], env, ['--functions', BASICS], 'start', { startTimeoutMs: 120_000 })
t.teardown(() => runner.kill())

const ORDER = 'shop/order.placed'
const orderV1 = {
  type: 'object',
  properties: { amount: { type: 'number' } },
  required: ['amount'],
  additionalProperties: false,
}
async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${all.url}${path}`, {
    method,
    headers: { ...auth, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as any }
}
const push = (name: string, schema: unknown) => call('PUT', `/v1/schemas/${encodeURIComponent(name)}`, { schema })
const key = (await call('POST', '/v1/keys', { env: 'production' })).body.data.key as string
/** Sends through the ingest-only node once it has learnt the key from the control topic. */
const send = (events: unknown) =>
  eventually(async () => {
    const r = await postJson(`${ingest.url}/e/${key}`, events)
    return r.status === 401 ? undefined : r
  }, 30_000)

t.test('push registers versions in the registry; pull and list answer them', async (t) => {
  t.match((await push(ORDER, orderV1)).body.data, { name: ORDER, env: 'production', version: 1 })
  const v2 = { ...orderV1, properties: { ...orderV1.properties, note: { type: 'string' } } }
  t.equal((await push(ORDER, v2)).body.data.version, 2)
  t.equal((await push(ORDER, v2)).body.data.version, 2, 'the same schema again is no new version')
  const subject = encodeURIComponent(subjectOf(env.SLUICE_TOPIC_PREFIX!, 'production', ORDER))
  const versions = await (await fetch(`${registryUrl}/subjects/${subject}/versions`)).json()
  t.same(versions, [1, 2], 'the JSON subject holds both versions')
  const got = await getJson(`${all.url}/v1/schemas/${encodeURIComponent(ORDER)}`, auth)
  t.same(
    got.body.data.versions.map((v: any) => v.version),
    [1, 2],
  )
  t.same(got.body.data.schema, v2)
  const list = await getJson(`${all.url}/v1/schemas`, auth)
  t.same(
    list.body.data.map((s: any) => [s.name, s.version]),
    [[ORDER, 2]],
  )
})

t.test("an incompatible version is refused by the registry's checker, and nothing changes", async (t) => {
  const refused = await push(ORDER, { ...orderV1, required: ['amount', 'note'] })
  t.equal(refused.status, 400)
  t.equal(refused.body.code, 'SCHEMA_BREAKING_CHANGE')
  t.match(refused.body.error, /^schema: the schema registry refused it: .*required property.*\(against version 2\)$/)
  const invalid = await push(ORDER, { type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } })
  t.same([invalid.status, invalid.body.code], [400, 'SCHEMA_INVALID'])
  t.equal((await getJson(`${all.url}/v1/schemas/${encodeURIComponent(ORDER)}`, auth)).body.data.version, 2)
})

t.test('block on another ingest node: the batch is refused whole with the exact message', async (t) => {
  await call('PATCH', '/v1/envs/production', { schema_mode: 'block', unknown_names: 'block' })
  const batch = [
    { name: ORDER, data: { amount: 1 } },
    { name: ORDER, data: { amount: '2' } },
  ]
  const refused = await eventually(async () => {
    const r = await send(batch)
    return r.status === 400 ? r : undefined
  }, 30_000)
  t.same(refused.body, { status: 400, code: 'EVENT_SCHEMA_VIOLATION', error: 'events[1].data/amount: must be number' })
  const unknown = await send({ name: 'shop/other', data: {} })
  t.equal(unknown.body.error, 'events[0].name: no schema for "shop/other" in environment "production"')
  t.equal((await send(batch.slice(0, 1))).status, 200)
})

t.test('warn stores the violations with the event in ClickHouse and counts them', async (t) => {
  await call('PATCH', '/v1/envs/production', { schema_mode: 'warn', unknown_names: 'allow' })
  const sent = await eventually(async () => {
    const r = await send({ name: ORDER, data: { amount: 'ten' }, id: 'warned-1' })
    return r.status === 200 ? r : undefined
  }, 30_000)
  const stored = await eventually(async () => {
    const r = await getJson(`${all.url}/v1/events/${sent.body.ids[0]}`, auth)
    return r.status === 200 ? r.body.data : undefined
  }, 90_000)
  t.same(stored.schema_violations, ['data/amount: must be number'])
  const metrics = await fetch(`${ingest.opsUrl ?? ingest.url}/metrics`)
  const scrape = parseMetrics(metrics.headers.get('content-type') ?? '', await metrics.text())
  t.equal(scrape.total('sluice_schema_violations_total', { env: 'production', name: ORDER, mode: 'warn' }), 1)
  t.ok(scrape.total('sluice_schema_violations_total', { env: 'production', name: ORDER, mode: 'block' }) >= 1)
})

t.test('violations and drafts are read from ClickHouse: one GROUP BY, the latest samples', async (t) => {
  // Minute-aligned, and until fixed: the bucket count does not depend on when the call is made.
  const since = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000
  const until = since + 12 * 60_000
  const sent = await send({ name: ORDER, data: { amount: 'eleven' }, id: 'warned-2' })
  t.equal(sent.status, 200, 'warn mode still on')
  const path = `/v1/schemas/${encodeURIComponent(ORDER)}/violations?since=${since}&until=${until}&bucket=60000`
  // The count and the samples are two SELECTs: one may see the second insert before the other does.
  const found = await eventually(async () => {
    const r = await call('GET', path)
    return r.body.data?.total === 2 && r.body.data.samples.length === 2 ? r.body.data : undefined
  }, 90_000)
  t.same(
    found.samples.map((s: any) => [s.event_id, s.violations]),
    [
      ['warned-2', ['data/amount: must be number']],
      ['warned-1', ['data/amount: must be number']],
    ],
    'newest first',
  )
  t.equal(found.series.length, 12, 'a bucket a minute from since to until')
  t.equal(
    found.series.reduce((n: number, b: any) => n + b.count, 0),
    2,
  )
  const other = await call('GET', `/v1/schemas/${encodeURIComponent('shop/other')}/violations`)
  t.same([other.status, other.body.data.total], [200, 0], 'a name without a schema answers too')

  const draft = await call('POST', `/v1/schemas/${encodeURIComponent(ORDER)}/draft`, { since })
  t.equal(draft.status, 200)
  t.ok(draft.body.data.sampled >= 3, 'the stored events of the name')
  t.same(draft.body.data.current.version, 2)
  t.same(draft.body.data.schema.required, ['amount'])
  t.match(draft.body.data.schema.properties.amount.type, ['string', 'integer'])
  t.match(draft.body.data.diff, [
    { op: 'change', path: '/properties/amount/type', from: 'number' },
    { op: 'remove', path: '/properties/note', from: { type: 'string' } },
    { op: 'remove', path: '/additionalProperties', from: false },
  ])
  const none = await call('POST', `/v1/schemas/${encodeURIComponent('shop/never')}/draft`, {})
  t.same([none.status, none.body.code], [404, 'SCHEMA_NO_SAMPLES'])
})

t.test('a webhook event that violates is kept as a failed request, replayable after the fix', async (t) => {
  await call('PATCH', '/v1/envs/production', { schema_mode: 'block' })
  const strict = { type: 'object', properties: { total: { type: 'integer' } }, additionalProperties: false }
  await push('billing/paid', strict)
  const transform = `function transform(evt) { return { name: 'billing/paid', data: evt } }`
  const hook = (await call('POST', '/v1/webhooks', { name: 'Billing', transform })).body.data
  const sent = await eventually(async () => {
    const r = await deliver(hook.url, JSON.stringify({ total: 12.5 }))
    return r.status === 200 ? r : undefined
  }, 30_000)
  t.equal(sent.status, 200)
  const failed = await eventually(async () => {
    const r = await getJson(`${all.url}/v1/webhooks/${hook.id}/requests/${sent.body.request_id}`, auth)
    return r.body.data?.status === 'failed' ? r.body.data : undefined
  }, 90_000)
  t.same(failed.error, { code: 'EVENT_SCHEMA_VIOLATION', message: 'event.data/total: must be integer' })
  t.equal((await push('billing/paid', { ...strict, properties: { total: { type: 'number' } } })).body.data.version, 2)
  const replay = await postJson(`${all.url}/v1/webhooks/${hook.id}/requests/${sent.body.request_id}/replay`, {}, auth)
  t.equal(replay.status, 202)
  const delivered = await eventually(async () => {
    const r = await getJson(`${all.url}/v1/webhooks/${hook.id}/requests/${sent.body.request_id}`, auth)
    return r.body.data?.status === 'delivered' && r.body.data.attempt === 2 ? r.body.data : undefined
  }, 90_000)
  t.equal(delivered.event_ids.length, 1)
})

t.test('a step.sendEvent that violates fails its step with the same message', async (t) => {
  await call('PATCH', '/v1/envs/production', { schema_mode: 'block', unknown_names: 'allow' })
  await push('test/notified', { type: 'object', properties: { from: { type: 'number' } } })
  await eventually(async () => {
    const r = await getJson(`${all.url}/v1/functions`, auth)
    return r.body.data?.some((f: any) => f.id.includes('sender')) ? true : undefined
  }, 120_000)
  const sent = await send({ name: 'test/send', data: {} })
  t.equal(sent.status, 200)
  const [run] = await eventually(async () => {
    const r = await getJson(`${all.url}/v1/events/${sent.body.ids[0]}/runs`, auth)
    return r.body.data?.some((x: any) => x.status === 'failed') ? r.body.data : undefined
  }, 120_000)
  t.equal(run.attempts, 1, 'not retried')
  t.equal(run.error.message, 'step.sendEvent("notify"): events[0].data/from: must be number')
})
