// The branch group's own tracking-plan modes (issue 52, item 5): `PATCH /v1/envs/branch` sets them,
// and every branch environment uses them until it sets its own; `sluice envs create` sets both.
import t from 'tap'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { postJson, ROOT, startServer } from '../helpers/server.ts'

const server = await startServer()
t.teardown(() => server.stop())

async function request(method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as any }
}
const sluice = (...args: string[]) =>
  promisify(execFile)(
    process.execPath,
    ['--no-node-snapshot', '--conditions=sluice-source', join(ROOT, 'bin/sluice.js'), ...args, '--url', server.url],
    { env: { ...process.env, SLUICE_SIGNING_KEY: '' } },
  )
const sendTo = (env: string, event: unknown) => postJson(`${server.url}/e/dev`, event, { 'x-service-env': env })
const envNamed = async (name: string) => (await request('GET', '/v1/envs')).body.data.find((e: any) => e.name === name)

const ORDER = 'shop/order.placed'
const order = { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] }

t.test('the group takes modes of its own; only its modes', async (t) => {
  const set = await request('PATCH', '/v1/envs/branch', { schema_mode: 'block', unknown_names: 'warn' })
  t.equal(set.status, 200)
  t.match(set.body.data, { name: 'branch', kind: 'branch', schema_mode: 'block', unknown_names: 'warn' })
  const refused = await request('PATCH', '/v1/envs/branch', { max_body_bytes: 2048, schema_mode: 'off' })
  t.same([refused.status, refused.body.code], [400, 'REQUEST_INVALID'])
  t.match(refused.body.error, /^max_body_bytes: the branch group "branch" takes only schema_mode and unknown_names/)
  const again = await request('PATCH', '/v1/envs/branch', {})
  t.match(again.body.data, { schema_mode: 'block', unknown_names: 'warn' }, 'nothing changed')
})

t.test('a new branch environment checks events with the group modes until it sets its own', async (t) => {
  t.equal((await request('PUT', `/v1/schemas/${encodeURIComponent(ORDER)}?env=branch`, { schema: order })).status, 200)
  t.equal((await request('POST', '/v1/envs', { name: 'feature-a', branch: true })).status, 201)
  t.match(await envNamed('feature-a'), { schema_mode: 'block', unknown_names: 'warn' }, 'listed as they apply')
  const blocked = await sendTo('feature-a', { name: ORDER, data: { amount: 'x' } })
  t.same([blocked.status, blocked.body.error], [400, 'events[0].data/amount: must be number'])
  t.equal((await sendTo('feature-a', { name: 'shop/unknown', data: {} })).status, 200, 'warn lets it in')
  await request('PATCH', '/v1/envs/branch', { schema_mode: 'warn' })
  t.equal((await sendTo('feature-a', { name: ORDER, data: { amount: 'x' } })).status, 200, 'a group change applies')
  await request('PATCH', '/v1/envs/branch', { schema_mode: 'block' })
  const own = await request('PATCH', '/v1/envs/feature-a', { schema_mode: 'off' })
  t.match(own.body.data, { schema_mode: 'off', unknown_names: 'warn' }, 'its own mode, the group policy')
  t.equal((await sendTo('feature-a', { name: ORDER, data: { amount: 'x' } })).status, 200, 'its own wins')
  t.match(await envNamed('production'), { schema_mode: 'off', unknown_names: 'allow' }, 'standard ones keep theirs')
})

t.test('sluice envs create sets both modes of a new environment', async (t) => {
  const created = JSON.parse(
    (await sluice('envs', 'create', 'feature-b', '--branch', '--schema-mode', 'warn', '--unknown-names', 'block'))
      .stdout,
  )
  t.match(created.data, { name: 'feature-b', kind: 'branch', schema_mode: 'warn', unknown_names: 'block' })
  t.equal((await sendTo('feature-b', { name: ORDER, data: { amount: 'x' } })).status, 200, 'warn, not the group block')
  const unknown = await sendTo('feature-b', { name: 'shop/unknown', data: {} })
  t.same(
    [unknown.status, unknown.body.error],
    [400, 'events[0].name: no schema for "shop/unknown" in environment "feature-b"'],
  )
  const grouped = JSON.parse((await sluice('envs', 'set', 'branch', '--unknown-names', 'allow')).stdout)
  t.match(grouped.data, { name: 'branch', schema_mode: 'block', unknown_names: 'allow' })
})
