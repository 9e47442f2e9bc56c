// The transforms people write for real providers: each pattern on a provider-shaped request,
// through the real sandbox, checked on the exact value it returns.
import t from 'tap'
import { DEFAULTS } from '../../config/settings.ts'
import { createSandbox } from '../../transformer/sandbox.ts'
import {
  LIMITS,
  clerkUserCreated,
  githubHeaders,
  githubPullRequest,
  githubPush,
  request,
  shopifyOrder,
  stripeInvoicePaid,
} from './payloads.ts'

const sandbox = createSandbox(LIMITS, { isolates: DEFAULTS.transformIsolates })
t.teardown(() => sandbox.close())

t.test('a fixed prefix plus a payload field names the event (Stripe)', async (t) => {
  const source = `function transform(evt) { return { name: 'stripe/' + evt.type, data: evt.data.object } }`
  const result = await sandbox.run(
    'stripe:1',
    source,
    request(stripeInvoicePaid, { 'Stripe-Signature': 't=1,v1=x' }, {}, true),
  )
  t.strictSame(result, { kind: 'ok', value: { name: 'stripe/invoice.paid', data: stripeInvoicePaid.data.object } })
})

t.test('the provider id is copied for dedup and a seconds timestamp becomes milliseconds (Stripe)', async (t) => {
  const source = `function transform(evt) { return { name: 'stripe/' + evt.type, data: {}, id: evt.id, ts: evt.created * 1000 } }`
  const result = await sandbox.run('stripe:2', source, request(stripeInvoicePaid))
  t.strictSame(result, {
    kind: 'ok',
    value: { name: 'stripe/invoice.paid', data: {}, id: 'evt_1PqVx2LkdIwHu7ixG5nQ1aBc', ts: 1724668530000 },
  })
})

t.test('the event comes from a canonical header and the delivery header is the dedup id (GitHub push)', async (t) => {
  const source = `function transform(evt, headers) {
    return { name: 'github/' + headers['X-Github-Event'], id: headers['X-Github-Delivery'], data: { ref: evt.ref, commits: evt.commits.length, head: evt.head_commit.id } }
  }`
  const result = await sandbox.run(
    'github:1',
    source,
    request(githubPush, githubHeaders('push', '72d3162e-cc78-11e3-81ab-4c9367dc0958')),
  )
  t.strictSame(result, {
    kind: 'ok',
    value: {
      name: 'github/push',
      id: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      data: { ref: 'refs/heads/main', commits: 3, head: githubPush.head_commit.id },
    },
  })
})

t.test('the header event type lower-cased, a dot, then the payload action (GitHub pull_request)', async (t) => {
  const source = `function transform(evt, headers) { return { name: 'github/' + headers['X-Github-Event'].toLowerCase() + '.' + evt.action, data: { number: evt.number } } }`
  const result = await sandbox.run('github:2', source, request(githubPullRequest, githubHeaders('Pull_Request', 'd-2')))
  t.strictSame(result, { kind: 'ok', value: { name: 'github/pull_request.opened', data: { number: 42 } } })
})

t.test('a header value trimmed, a word removed and lower-cased (Shopify topic)', async (t) => {
  const source = `const transform = (order, headers) => ({
    name: 'shopify/' + headers['X-Shopify-Topic'].trim().replace(' Webhook', '').toLowerCase(),
    data: { order: order.id, total: Number(order.total_price) },
  })`
  const result = await sandbox.run(
    'shopify:1',
    source,
    request(shopifyOrder, { 'X-Shopify-Topic': '  Orders/Paid Webhook ' }),
  )
  t.strictSame(result, {
    kind: 'ok',
    value: { name: 'shopify/orders/paid', data: { order: 5467203666068, total: 403 } },
  })
})

t.test('an async transform is awaited (Clerk)', async (t) => {
  const source = `async function transform(evt) {
    const email = await Promise.resolve(evt.data.email_addresses[0].email_address)
    return { name: 'clerk/' + evt.type, data: { id: evt.data.id, email }, ts: evt.timestamp }
  }`
  const result = await sandbox.run('clerk:1', source, request(clerkUserCreated))
  t.strictSame(result, {
    kind: 'ok',
    value: {
      name: 'clerk/user.created',
      data: { id: 'user_29w83sxmDNGwOuEthce5gg56FcC', email: 'ada@example.com' },
      ts: 1654012591835,
    },
  })
})

t.test('query parameters arrive as arrays, repeated ones with every value', async (t) => {
  const source = `function transform(evt, headers, queryParams) { return { name: 'app/' + queryParams.source[0], data: { tags: queryParams.tag, missing: queryParams.nope === undefined } } }`
  const result = await sandbox.run('query:1', source, request({}, {}, { source: ['crm'], tag: ['a', 'b'] }))
  t.strictSame(result, { kind: 'ok', value: { name: 'app/crm', data: { tags: ['a', 'b'], missing: true } } })
})

t.test('raw is the exact body string as sent, e.g. for a signature', async (t) => {
  const input = request(stripeInvoicePaid, {}, {}, true)
  const source = `function transform(evt, headers, queryParams, raw) { return { name: 'raw/check', data: { raw, length: raw.length, parsedAgain: JSON.parse(raw).id === evt.id } } }`
  const result = await sandbox.run('raw:1', source, input)
  t.strictSame(result, {
    kind: 'ok',
    value: { name: 'raw/check', data: { raw: input.raw, length: input.raw.length, parsedAgain: true } },
  })
  t.not(input.raw, JSON.stringify(stripeInvoicePaid), 'the pretty-printed original, not a re-serialisation')
})

t.test('headers and query default to {} when the caller gives none', async (t) => {
  const source = `function transform(evt, headers, queryParams) { return { name: 'x/y', data: { h: Object.keys(headers).length, q: Object.keys(queryParams).length } } }`
  const input = JSON.parse('{"body": {}, "raw": "{}"}') // as a caller without types might send it
  t.strictSame(await sandbox.run('defaults:1', source, input), {
    kind: 'ok',
    value: { name: 'x/y', data: { h: 0, q: 0 } },
  })
})

t.test('an array of events is returned as it is; validation happens elsewhere', async (t) => {
  const source = `function transform(evt) { return evt.commits.map((c) => ({ name: 'github/commit', id: c.id, data: { message: c.message.split('\\n')[0] } })) }`
  const result = await sandbox.run('github:3', source, request(githubPush))
  t.strictSame(result, {
    kind: 'ok',
    value: githubPush.commits.map((c) => ({
      name: 'github/commit',
      id: c.id,
      data: { message: c.message.split('\n')[0] },
    })),
  })
})

t.test(
  'the output is a JSON clone: undefined fields vanish, dates become strings, nested functions drop',
  async (t) => {
    const source = `function transform() { return { name: 'x/y', data: { gone: undefined, at: new Date(0), f() {}, list: [undefined, 1] } } }`
    t.strictSame(await sandbox.run('clone:1', source, request({})), {
      kind: 'ok',
      value: { name: 'x/y', data: { at: '1970-01-01T00:00:00.000Z', list: [null, 1] } },
    })
  },
)
