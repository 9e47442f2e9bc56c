// Event schemas in embedded mode (docs/schemas.md): versions with the compatibility rule, REST and
// the CLI, and the enforcement modes on the Event API, step.sendEvent and webhooks.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { getJson, postJson, ROOT, startServer, tempDir } from '../helpers/server.ts'
import { BASICS, finishedRuns, sendEvent } from '../functions/fixtures/rest.ts'
import { createWebhook, deliver, outcome, storedEvents } from '../webhooks/helpers.ts'
import { parseMetrics } from '../ops/metrics-scrape.ts'

const server = await startServer({ flags: { functionsFile: BASICS } })
t.teardown(() => server.stop())

const ORDER = 'shop/order.placed'
const orderV1 = {
  type: 'object',
  properties: { amount: { type: 'number' }, currency: { enum: ['EUR', 'USD'] } },
  required: ['amount'],
  additionalProperties: false,
}

async function request(method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as any }
}
const push = (name: string, schema: unknown, env?: string) =>
  request('PUT', `/v1/schemas/${encodeURIComponent(name)}${env ? `?env=${env}` : ''}`, { schema })
const setModes = (env: string, modes: Record<string, string>) => request('PATCH', `/v1/envs/${env}`, modes)
const violations = async (labels: Record<string, string>) => {
  const response = await fetch(`${server.url}/metrics`)
  const scrape = parseMetrics(response.headers.get('content-type') ?? '', await response.text())
  return scrape.total('sluice_schema_violations_total', labels)
}

t.test('push stores versions, pull answers the latest with its versions, list names them', async (t) => {
  const first = await push(ORDER, orderV1)
  t.equal(first.status, 200)
  t.match(first.body.data, { name: ORDER, env: 'production', version: 1, schema: orderV1 })
  const same = await push(ORDER, orderV1)
  t.equal(same.body.data.version, 1, 'the same schema again is no new version')
  const v2 = { ...orderV1, properties: { ...orderV1.properties, note: { type: 'string' } } }
  t.equal((await push(ORDER, v2)).body.data.version, 2, 'an added optional property is compatible')
  const got = await getJson(`${server.url}/v1/schemas/${encodeURIComponent(ORDER)}`)
  t.equal(got.status, 200)
  t.same(got.body.data.schema, v2)
  t.same(
    got.body.data.versions.map((v: any) => [v.version, v.schema]),
    [
      [1, orderV1],
      [2, v2],
    ],
  )
  const list = await getJson(`${server.url}/v1/schemas?env=production`)
  t.same(
    list.body.data.map((s: any) => [s.name, s.env, s.version]),
    [[ORDER, 'production', 2]],
  )
  const missing = await getJson(`${server.url}/v1/schemas/${encodeURIComponent('shop/none')}`)
  t.same([missing.status, missing.body.code], [404, 'NOT_FOUND'])
})

t.test('an incompatible version is refused with the pointer, and nothing changes', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ ...orderV1, required: ['amount', 'currency'] }, 'schema/required: newly required: currency (against version 2)'],
    [
      { ...orderV1, properties: { ...orderV1.properties, amount: { type: 'integer' } } },
      'schema/properties/amount/type: no longer accepts number (against version 2)',
    ],
    [
      { ...orderV1, properties: { ...orderV1.properties, currency: { enum: ['EUR'] } } },
      'schema/properties/currency/enum: removed "USD" (against version 2)',
    ],
  ]
  for (const [schema, message] of cases) {
    const refused = await push(ORDER, schema)
    t.same(refused.body, { status: 400, code: 'SCHEMA_BREAKING_CHANGE', error: message })
  }
  const got = await getJson(`${server.url}/v1/schemas/${encodeURIComponent(ORDER)}`)
  t.equal(got.body.data.version, 2, 'still version 2')
  const open = { type: 'object', properties: { a: { type: 'number' } } }
  t.equal((await push('shop/open', open)).status, 200)
  const typed = await push('shop/open', { ...open, properties: { ...open.properties, b: { type: 'string' } } })
  t.equal(
    typed.body.error,
    'schema/properties/b/type: added: only string where any value was accepted (against version 1)',
    'a typed property added to an open object narrows it (as in the registry)',
  )
})

t.test('a schema that is not valid JSON Schema, has a remote $ref or an unknown keyword is refused', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ type: 'objekt' }, 'schema/type: must be equal to one of the allowed values'],
    [{ type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } }, 'schema/properties/a/$ref'],
    [{ type: 'object', properties: { a: { typ: 'string' } } }, 'schema/properties/a/typ: strict mode'],
    [{ type: 'object', properties: { a: { type: 'string', format: 'hostname' } } }, 'schema/properties/a/format'],
  ]
  for (const [schema, start] of cases) {
    const refused = await push('shop/bad', schema)
    t.equal(refused.status, 400)
    t.equal(refused.body.code, 'SCHEMA_INVALID')
    t.ok(refused.body.error.startsWith(start), refused.body.error)
  }
  const unknownEnv = await push('shop/bad', { type: 'object' }, 'nowhere')
  t.same([unknownEnv.status, unknownEnv.body.code], [404, 'ENV_NOT_FOUND'])
  t.equal((await getJson(`${server.url}/v1/schemas/shop%2Fbad`)).status, 404, 'nothing stored')
})

// The dev server sends every key's events to production: each test sets production's modes and resets them.
const productionModes = async (t: Test, modes: Record<string, string>) => {
  t.teardown(() => setModes('production', { schema_mode: 'off', unknown_names: 'allow' }))
  return setModes('production', modes)
}

t.test('off accepts anything; block refuses a batch whole, naming the event, pointer and rule', async (t) => {
  const env = (await request('POST', '/v1/envs', { name: 'staging' })).body.data
  t.same([env.schema_mode, env.unknown_names], ['off', 'allow'], 'defaults')
  const batch = [
    { name: ORDER, data: { amount: 1 } },
    { name: ORDER, data: { amount: 2 } },
    { name: ORDER, data: { amount: 3 } },
    { name: ORDER, data: { amount: 'ten' } },
  ]
  const off = await postJson(`${server.url}/e/dev`, batch)
  t.equal(off.status, 200, 'off: accepted')
  const patched = await productionModes(t, { schema_mode: 'block' })
  t.equal(patched.body.data.schema_mode, 'block')
  const before = await violations({ env: 'production', name: ORDER, mode: 'block' })
  const refused = await postJson(`${server.url}/e/dev`, [...batch.slice(0, 3), { ...batch[3], id: 'refused-3' }])
  t.same(refused.body, {
    status: 400,
    code: 'EVENT_SCHEMA_VIOLATION',
    error: 'events[3].data/amount: must be number',
  })
  const missing = await postJson(`${server.url}/e/dev`, { name: ORDER, data: {} })
  t.equal(missing.body.error, 'events[0].data/amount: is required')
  t.equal(await violations({ env: 'production', name: ORDER, mode: 'block' }), before + 2)
  const stored = await getJson(`${server.url}/v1/events?id=refused-3`)
  t.same(stored.body.data, [], 'nothing of the refused batch was stored')
  t.equal((await postJson(`${server.url}/e/dev`, batch.slice(0, 3))).status, 200, 'valid events pass')
})

t.test('warn stores the event with its violations and counts them', async (t) => {
  await productionModes(t, { schema_mode: 'warn' })
  const before = await violations({ env: 'production', name: ORDER, mode: 'warn' })
  const sent = await postJson(`${server.url}/e/dev`, [
    { name: ORDER, data: { amount: 'ten' } },
    { name: ORDER, data: { amount: 10 } },
  ])
  t.equal(sent.status, 200)
  const [bad, good] = await storedEvents(server.url, sent.body.ids)
  t.same(bad.schema_violations, ['data/amount: must be number'])
  t.equal(good.schema_violations, undefined, 'a valid event carries none')
  t.equal(await violations({ env: 'production', name: ORDER, mode: 'warn' }), before + 1)
})

t.test('unknown_names: allow, warn and block for a name without a schema', async (t) => {
  const event = { name: 'shop/cart.viewed', data: { items: 2 } }
  t.equal((await postJson(`${server.url}/e/dev`, event)).status, 200, 'allow')
  await productionModes(t, { unknown_names: 'warn' })
  const warned = await postJson(`${server.url}/e/dev`, event)
  const [stored] = await storedEvents(server.url, warned.body.ids)
  t.same(stored.schema_violations, ['name: no schema for "shop/cart.viewed" in environment "production"'])
  t.equal(await violations({ env: 'production', name: 'shop/cart.viewed', mode: 'warn' }), 1)
  await setModes('production', { unknown_names: 'block' })
  const blocked = await postJson(`${server.url}/e/dev`, [{ name: ORDER, data: { amount: 1 } }, event])
  t.same(blocked.body, {
    status: 400,
    code: 'EVENT_SCHEMA_VIOLATION',
    error: 'events[1].name: no schema for "shop/cart.viewed" in environment "production"',
  })
})

t.test("branch environments use their group's schemas", async (t) => {
  await request('POST', '/v1/envs', { name: 'feature-x', branch: true, schema_mode: 'block' })
  t.equal((await push(ORDER, orderV1, 'branch')).body.data.env, 'branch')
  const refused = await postJson(
    `${server.url}/e/dev`,
    { name: ORDER, data: { amount: 'x' } },
    { 'x-service-env': 'feature-x' },
  )
  t.equal(refused.body.error, 'events[0].data/amount: must be number')
  const own = { type: 'object', properties: { amount: { type: ['number', 'string'] } } }
  t.equal((await push(ORDER, own, 'feature-x')).body.data.env, 'feature-x', 'a branch may have its own')
  const accepted = await postJson(
    `${server.url}/e/dev`,
    { name: ORDER, data: { amount: 'x' } },
    { 'x-service-env': 'feature-x' },
  )
  t.equal(accepted.status, 200, "its own schema wins over the group's")
})

t.test('a step.sendEvent that violates fails its step with the same message', async (t) => {
  await push('test/notified', { type: 'object', properties: { from: { type: 'number' } } })
  await setModes('production', { schema_mode: 'block' })
  t.teardown(() => setModes('production', { schema_mode: 'off' }))
  const id = await sendEvent(server.url, { name: 'test/send', data: {} })
  const [run] = await finishedRuns(server.url, id)
  t.equal(run.status, 'failed')
  t.equal(run.attempts, 1, 'not retried: the same events would break the schema again')
  t.equal(run.error.message, 'step.sendEvent("notify"): events[0].data/from: must be number')
})

t.test('a webhook event that violates is kept as a failed request, replayable once the schema is fixed', async (t) => {
  await request('POST', '/v1/envs', { name: 'hooks', schema_mode: 'block' })
  const strict = { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] }
  await push('billing/paid', strict, 'hooks')
  const transform = `function transform(evt) { return { name: 'billing/paid', data: evt } }`
  const hook = await createWebhook(server.url, { name: 'Billing', env: 'hooks', transform })
  const sent = await deliver(hook.url, JSON.stringify({ amount: 12.5 }))
  t.equal(sent.status, 200, 'the sender is never told')
  const failed = await outcome(server.url, hook.id, sent.body.request_id)
  t.equal(failed.status, 'failed')
  t.same(failed.error, { code: 'EVENT_SCHEMA_VIOLATION', message: 'event.data/amount: must be integer' })
  t.equal(failed.request.body, JSON.stringify({ amount: 12.5 }), 'the raw request is kept')
  t.equal((await push('billing/paid', { ...strict, properties: { amount: { type: 'number' } } }, 'hooks')).status, 200)
  const replay = await postJson(`${server.url}/v1/webhooks/${hook.id}/requests/${sent.body.request_id}/replay`, {})
  t.equal(replay.status, 202)
  const delivered = await outcome(server.url, hook.id, sent.body.request_id, 2)
  t.equal(delivered.status, 'delivered')
  const [event] = await storedEvents(server.url, delivered.event_ids)
  t.same([event.name, event.data], ['billing/paid', { amount: 12.5 }])
})

t.test('the CLI pushes, pulls and lists schemas', async (t) => {
  const dir = await tempDir()
  const file = join(dir, 'signup.json')
  const schema = { type: 'object', properties: { plan: { type: 'string' } } }
  await writeFile(file, JSON.stringify(schema))
  const sluice = (...args: string[]) =>
    promisify(execFile)(
      process.execPath,
      ['--no-node-snapshot', '--conditions=sluice-source', join(ROOT, 'bin/sluice.js'), ...args, '--url', server.url],
      { env: { ...process.env, SLUICE_SIGNING_KEY: '' } },
    )
  const pushed = JSON.parse((await sluice('schemas', 'push', 'app/user.signed-up', file)).stdout)
  t.match(pushed.data, { name: 'app/user.signed-up', env: 'production', version: 1 })
  t.same(JSON.parse((await sluice('schemas', 'pull', 'app/user.signed-up')).stdout), schema)
  const listed = JSON.parse((await sluice('schemas', 'list', '--env', 'production')).stdout)
  t.ok(listed.data.some((s: any) => s.name === 'app/user.signed-up' && s.version === 1))
  await writeFile(file, JSON.stringify({ ...schema, required: ['plan'] }))
  const refused = await sluice('schemas', 'push', 'app/user.signed-up', file).catch((err) => err)
  t.equal(refused.code, 1)
  t.match(refused.stderr, /SCHEMA_BREAKING_CHANGE/)
})
