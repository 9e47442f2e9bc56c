// A name's schema from its traffic (docs/schemas.md), embedded: drafting from stored events, the
// violations warn mode kept, and `sluice types` with a project whose tsc then checks the data.
import t from 'tap'
import { execFile } from 'node:child_process'
import { copyFile, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { getJson, postJson, ROOT, startServer, tempDir } from '../helpers/server.ts'
import { storedEvents } from '../webhooks/helpers.ts'
import { renderTypes } from '../../cli/types.ts'

const server = await startServer()
t.teardown(() => server.stop())

const ORDER = 'shop/order.placed'
const path = (name: string, tail: string) => `${server.url}/v1/schemas/${encodeURIComponent(name)}${tail}`
async function call(method: string, url: string, body?: unknown) {
  const response = await fetch(url, {
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
const orders = Array.from({ length: 24 }, (_, i) => ({
  name: ORDER,
  data: {
    orderId: `3f2b8c1e-4a5d-4e6f-8a9b-${String(i).padStart(12, '0')}`,
    amount: i + 0.5,
    currency: i % 2 ? 'EUR' : 'USD',
    ...(i % 2 === 0 && { note: 'gift' }),
  },
}))

t.test('a draft from stored events, with its diff to the current version; nothing is saved', async (t) => {
  const sent = await postJson(`${server.url}/e/dev`, orders)
  await storedEvents(server.url, sent.body.ids)
  const first = await call('POST', path(ORDER, '/draft'))
  t.equal(first.status, 200)
  const proposed = {
    type: 'object',
    properties: {
      orderId: { type: 'string', format: 'uuid' },
      amount: { type: 'number' },
      currency: { type: 'string', enum: ['EUR', 'USD'] },
      note: { type: 'string' },
    },
    required: ['orderId', 'amount', 'currency'],
  }
  t.same(first.body.data, {
    name: ORDER,
    env: 'production',
    sampled: 24,
    schema: proposed,
    current: null,
    diff: [
      { op: 'add', path: '/type', to: 'object' },
      { op: 'add', path: '/properties', to: proposed.properties },
      { op: 'add', path: '/required', to: proposed.required },
    ],
  })
  t.equal((await getJson(path(ORDER, ''))).status, 404, 'nothing saved')
  const current = { type: 'object', properties: { amount: { type: 'integer' } } }
  t.equal((await call('PUT', path(ORDER, ''), { schema: current })).status, 200)
  const limited = await call('POST', path(ORDER, '/draft'), { limit: 5 })
  t.equal(limited.body.data.sampled, 5, 'the latest 5')
  t.same(limited.body.data.current, { version: 1, schema: current })
  t.same(limited.body.data.diff[0], { op: 'change', path: '/properties/amount/type', from: 'integer', to: 'number' })
  t.same(limited.body.data.schema.properties.currency, { type: 'string' }, '5 samples: too few for an enum')
  const later = await call('POST', path(ORDER, '/draft'), { since: new Date(Date.now() + 60_000).toISOString() })
  t.same(later.body, {
    status: 404,
    code: 'SCHEMA_NO_SAMPLES',
    error: `draft: no stored events of "${ORDER}" in environment "production"`,
  })
  const unknown = await call('POST', path('shop/never', '/draft'), {})
  t.same([unknown.status, unknown.body.code], [404, 'SCHEMA_NO_SAMPLES'])
  const badSince = await call('POST', path(ORDER, '/draft'), { since: 'last week' })
  t.same(badSince.body.error, 'body.since: must be an integer (milliseconds) or an ISO 8601 time')
})

t.test('the CLI prints the draft on stdout (or --out) and its diff on stderr', async (t) => {
  const dir = await tempDir()
  const drafted = await sluice('schemas', 'draft', ORDER, '--limit', '24')
  t.same(JSON.parse(drafted.stdout).required, ['orderId', 'amount', 'currency'])
  t.match(drafted.stderr, `drafted "${ORDER}" in production from 24 events; against version 1:`)
  t.match(drafted.stderr, '  ~ /properties/amount/type: "integer" -> "number"')
  t.match(drafted.stderr, '  + /properties/orderId: {"type":"string","format":"uuid"}')
  const file = join(dir, 'order.json')
  await sluice('schemas', 'draft', ORDER, '--out', file)
  t.same(JSON.parse(await readFile(file, 'utf8')).properties.amount, { type: 'number' })
  const none = await sluice('schemas', 'draft', 'shop/never').catch((err) => err)
  t.equal(none.code, 1)
  t.match(none.stderr, /SCHEMA_NO_SAMPLES/)
})

t.test('violations: counts per bucket and the latest samples of the events warn mode kept', async (t) => {
  const name = 'shop/refund.issued'
  await call('PUT', path(name, ''), { schema: { type: 'object', properties: { amount: { type: 'number' } } } })
  await call('PATCH', `${server.url}/v1/envs/production`, { schema_mode: 'warn' })
  t.teardown(() => call('PATCH', `${server.url}/v1/envs/production`, { schema_mode: 'off' }))
  const since = Date.now() - 1000
  const sent = await postJson(`${server.url}/e/dev`, [
    { name, data: { amount: 'ten' }, id: 'refund-1' },
    { name, data: { amount: 10 } },
    { name, data: { amount: false }, id: 'refund-3' },
  ])
  await storedEvents(server.url, sent.body.ids)
  const found = await call('GET', path(name, `/violations?since=${since}&bucket=60000`))
  t.equal(found.status, 200)
  const { series, samples, ...rest } = found.body.data
  t.same(rest, { name, env: 'production', total: 2, truncated: false })
  t.equal(
    series.reduce((n: number, b: { count: number }) => n + b.count, 0),
    2,
  )
  t.ok(series.length >= 1 && series.length <= 2, 'one-minute buckets from since to now')
  t.same(
    samples.map((s: any) => [s.event_id, s.internal_id, s.violations]),
    [
      ['refund-3', sent.body.ids[2], ['data/amount: must be number']],
      ['refund-1', sent.body.ids[0], ['data/amount: must be number']],
    ],
    'newest first',
  )
  const day = await call('GET', path(name, ''.concat('/violations')))
  t.same([day.body.data.total, day.body.data.series.length], [2, 25], 'the last 24 hours by the hour by default')
  const noSchema = await call('GET', path('shop/unschemed', '/violations'))
  t.same([noSchema.status, noSchema.body.data.total, noSchema.body.data.samples], [200, 0, []])
  const inverted = await call('GET', path(name, `/violations?since=${since}&until=${since - 1}`))
  t.same(inverted.body.error, 'query.since: must be before query.until')
})

t.test('sluice types: a project whose tsc passes with right fields and fails with a wrong one', async (t) => {
  const order = {
    type: 'object',
    properties: {
      orderId: { type: 'string' },
      amount: { type: 'number' },
      currency: { enum: ['EUR', 'USD'] },
    },
    required: ['orderId', 'amount'],
  }
  const cancelled = {
    type: 'object',
    properties: { orderId: { type: 'string' }, reason: { type: 'string' } },
    required: ['orderId', 'reason'],
    additionalProperties: false,
  }
  const env = 'typed'
  await call('POST', `${server.url}/v1/envs`, { name: env })
  await call('PUT', path(ORDER, `?env=${env}`), { schema: order })
  await call('PUT', path('shop/order.cancelled', `?env=${env}`), { schema: cancelled })
  const dir = await tempDir()
  const declaration = join(dir, 'sluice-events.d.ts')
  const written = await sluice('types', '--env', env, '--out', declaration)
  t.match(written.stderr, `wrote ${declaration}: 2 event names`)
  const text = await readFile(declaration, 'utf8')
  t.match(text, `"shop/order.placed": ShopOrderPlaced.Data`)
  t.match(text, /currency\?: "EUR" \| "USD";/)
  const fixture = join(ROOT, 'tests/fixtures/typed-sends')
  for (const file of ['right.ts', 'wrong.ts', 'handler-wrong.ts']) await copyFile(join(fixture, file), join(dir, file))
  const tsc = async (files: string[]) => {
    const config = {
      compilerOptions: {
        target: 'es2024',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        allowImportingTsExtensions: true,
        typeRoots: [join(ROOT, 'node_modules/@types')],
        types: ['node'],
        paths: { 'sluice/client': [join(ROOT, 'client/index.ts')] },
      },
      files,
    }
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(config))
    await writeFile(join(dir, 'package.json'), '{"type": "module"}')
    const run = promisify(execFile)(join(ROOT, 'node_modules/.bin/tsc'), ['-p', dir], { cwd: dir })
    return run.then(
      () => ({ code: 0, out: '' }),
      (err) => ({ code: err.code as number, out: String(err.stdout) }),
    )
  }
  t.same(await tsc(['sluice-events.d.ts', 'right.ts']), { code: 0, out: '' }, 'right fields compile')
  const wrong = await tsc(['sluice-events.d.ts', 'wrong.ts'])
  t.equal(wrong.code, 2)
  t.match(wrong.out, "wrong.ts(8,74): error TS2322: Type 'string' is not assignable to type 'number'.")
  const handler = await tsc(['sluice-events.d.ts', 'handler-wrong.ts'])
  t.match(handler.out, "error TS2322: Type 'string' is not assignable to type 'number'.")
  t.same(await tsc(['wrong.ts', 'handler-wrong.ts']), { code: 0, out: '' }, 'without the declaration: untyped')
})

t.test(
  'sluice types: a branch environment has its own schemas and those of its group it does not override',
  async (t) => {
    const own = { type: 'object', properties: { reason: { type: 'string' } } }
    const group = { type: 'object', properties: { amount: { type: 'number' } } }
    const overridden = { type: 'object', properties: { sku: { type: 'number' } } }
    await call('POST', `${server.url}/v1/envs`, { name: 'feature-types', branch: true })
    await call('PUT', path('shop/refund.issued', '?env=feature-types'), { schema: own })
    await call('PUT', path('shop/item.added', '?env=feature-types'), { schema: overridden })
    await call('PUT', path('shop/cart.paid', '?env=branch'), { schema: group })
    await call('PUT', path('shop/item.added', '?env=branch'), { schema: { type: 'object' } })
    const { stdout } = await sluice('types', '--env', 'feature-types')
    t.match(stdout, '"shop/refund.issued": ShopRefundIssued.Data', 'its own')
    t.match(stdout, '"shop/cart.paid": ShopCartPaid.Data', "its group's")
    t.equal(stdout.match(/"shop\/item\.added":/g)?.length, 1, 'a name in both once')
    t.match(stdout, /sku\?: number/, 'its own version of it')
  },
)

t.test('sluice types: a namespace per name, so nested types of one title in two schemas do not clash', async (t) => {
  const money = (type: string) => ({ type: 'object', properties: { price: { title: 'Money', type } } })
  const text = await renderTypes(
    [
      { name: 'shop/a', version: 1, schema: money('string') },
      { name: 'shop/*/a', version: 2, schema: money('integer') },
    ],
    'a test',
  )
  // Sorted by name: "shop/*/a" first takes ShopA.
  t.match(text, '"shop/*/a": ShopA.Data')
  t.match(text, '"shop/a": ShopA2.Data')
  t.match(text, '/** "shop/*\\/a" v2 */\ndeclare namespace ShopA {\n  export type Money = number;')
  t.match(text, '/** "shop/a" v1 */\ndeclare namespace ShopA2 {\n  export type Money = string;')
})
