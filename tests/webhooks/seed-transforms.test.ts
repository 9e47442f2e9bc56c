// The seed's transform patterns, end to end through a real server: a provider-shaped request
// to the webhook URL → raw capture → sandboxed transform → dedup → stored event.
import t from 'tap'
import { timingSafeEqual } from 'node:crypto'
import { eventually, getJson, startServer } from '../helpers/server.ts'
import { createWebhook, deliver, hmacHex, outcome, storedEvents } from './helpers.ts'
import {
  clerkHeaders,
  clerkUserCreated,
  githubHeaders,
  githubPullRequestOpened,
  linearIssueCreate,
  shopifyHeaders,
  shopifyOrderCreate,
  stripeInvoicePaid,
} from './payloads.ts'

const server = await startServer()
t.teardown(() => server.stop())

/** Delivers one request and returns the single event it produced, as stored. */
async function deliverOne(url: string, webhookId: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await deliver(url, body, headers)
  if (response.status !== 200) throw new Error(`delivery refused: ${JSON.stringify(response.body)}`)
  const result = await outcome(server.url, webhookId, response.body.request_id)
  if (result.status !== 'delivered') throw new Error(`not delivered: ${JSON.stringify(result.error)}`)
  const [event] = await storedEvents(server.url, result.event_ids)
  return { event, requestId: response.body.request_id as string }
}

t.test('fixed prefix + payload field: a Clerk user.created becomes clerk/user.created', async (t) => {
  const hook = await createWebhook(server.url, {
    name: 'Clerk',
    transform: `function transform(evt, headers, queryParams, raw) {
      return { name: 'clerk/' + evt.type, data: evt.data }
    }`,
  })
  const { event, requestId } = await deliverOne(hook.url, hook.id, clerkUserCreated, clerkHeaders)
  t.equal(event.name, 'clerk/user.created')
  t.same(event.data, clerkUserCreated.data)
  t.equal(event.env, 'production')
  t.same(event.source, { kind: 'webhook', webhook_id: hook.id, request_id: requestId })
  t.equal(event.id, event.internal_id, 'no id from the transform: the internal ID is the dedup key')
  t.equal(event.ts, event.received_at, 'no ts from the transform: the receive time')
})

t.test('header value trimmed, a word removed and lower-cased names the event', async (t) => {
  const hook = await createWebhook(server.url, {
    name: 'Billing',
    transform: `function transform(evt, headers) {
      var kind = headers['X-Event-Type'].trim().replace(' Event', '').toLowerCase()
      return { name: 'billing/' + kind, data: { account: evt.account, plan: evt.plan } }
    }`,
  })
  const { event } = await deliverOne(
    hook.url,
    hook.id,
    { account: 'acct_77', plan: 'pro' },
    { 'x-event-type': '  Subscription.Renewed Event  ' },
  )
  t.equal(event.name, 'billing/subscription.renewed')
  t.same(event.data, { account: 'acct_77', plan: 'pro' })
})

t.test(
  "Stripe: the event id is copied for dedup and ts is created (seconds) × 1000; Stripe's retry is stored once",
  async (t) => {
    const hook = await createWebhook(server.url, {
      name: 'Stripe',
      transform: `function transform(evt) {
      return { name: 'stripe/' + evt.type, id: evt.id, ts: evt.created * 1000, data: evt.data.object }
    }`,
    })
    const first = await deliverOne(hook.url, hook.id, stripeInvoicePaid)
    t.equal(first.event.name, 'stripe/invoice.paid')
    t.equal(first.event.id, 'evt_1PqVx2LkdIwHu7ixG5nQ1aBc')
    t.equal(first.event.ts, 1724668530000)
    t.equal(first.event.data.amount_paid, 2000)

    // Stripe retries a delivery it did not see acknowledged: the sender gets a 2xx, dedup drops the copy.
    const retry = await deliver(hook.url, stripeInvoicePaid)
    t.equal(retry.status, 200)
    const retried = await outcome(server.url, hook.id, retry.body.request_id)
    t.equal(retried.status, 'delivered')
    const copies = await eventually(async () => {
      const r = await getJson(`${server.url}/v1/events?id=evt_1PqVx2LkdIwHu7ixG5nQ1aBc&include_duplicates=true`)
      return r.body.data.length === 2 ? r.body.data : undefined
    })
    const duplicate = copies.find((e: any) => e.internal_id === retried.event_ids[0])
    t.equal(duplicate.duplicate_of, first.event.internal_id, 'the retry is recorded as a duplicate of the first')
    const live = await getJson(`${server.url}/v1/events?id=evt_1PqVx2LkdIwHu7ixG5nQ1aBc`)
    t.same(
      live.body.data.map((e: any) => e.internal_id),
      [first.event.internal_id],
      'stored once',
    )
  },
)

t.test("type lower-cased + '.' + action: a Linear Issue create becomes linear/issue.create", async (t) => {
  const hook = await createWebhook(server.url, {
    name: 'Linear',
    transform: `function transform(evt) {
      return { name: 'linear/' + evt.type.toLowerCase() + '.' + evt.action, data: evt.data }
    }`,
  })
  const { event } = await deliverOne(hook.url, hook.id, linearIssueCreate)
  t.equal(event.name, 'linear/issue.create')
  t.equal(event.data.identifier, 'ENG-123')
})

t.test('Shopify: the topic header names the event, the webhook-id header dedups', async (t) => {
  const hook = await createWebhook(server.url, {
    name: 'Shopify',
    transform: `function transform(evt, headers) {
      return { name: 'shopify/' + headers['X-Shopify-Topic'], id: headers['X-Shopify-Webhook-Id'], data: { order: evt, shop: headers['X-Shopify-Shop-Domain'] } }
    }`,
  })
  const { event } = await deliverOne(hook.url, hook.id, shopifyOrderCreate, shopifyHeaders)
  t.equal(event.name, 'shopify/orders/create')
  t.equal(event.id, 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043')
  t.equal(event.data.shop, 'acme.myshopify.com')
  t.equal(event.data.order.total_price, '403.00')
})

t.test(
  'signature pattern: the transform passes raw and the signature header into data, and the function verifies them',
  async (t) => {
    const secret = 'gh-webhook-secret-123'
    const hook = await createWebhook(server.url, {
      name: 'GitHub',
      transform: `function transform(evt, headers, queryParams, raw) {
      return {
        name: 'github/' + headers['X-Github-Event'] + '.' + evt.action,
        id: headers['X-Github-Delivery'],
        data: { raw: raw, sig: headers['X-Hub-Signature-256'], repo: evt.repository.full_name, number: evt.number },
      }
    }`,
    })
    // Exactly the bytes GitHub signs and sends (pretty-printed, so a re-serialised body would not match).
    const body = JSON.stringify(githubPullRequestOpened, null, 2)
    const { event } = await deliverOne(hook.url, hook.id, body, {
      ...githubHeaders,
      'X-Hub-Signature-256': 'sha256=' + hmacHex(secret, body),
    })
    t.equal(event.name, 'github/pull_request.opened')
    t.equal(event.id, '72d3162e-cc78-11e3-81ab-4c9367dc0958')
    t.same([event.data.repo, event.data.number], ['acme/sluice', 42])
    t.equal(event.data.raw, body, 'raw is the body exactly as sent')
    // What the function does with it (docs/webhooks.md's worked example):
    const expected = Buffer.from('sha256=' + hmacHex(secret, event.data.raw))
    const given = Buffer.from(event.data.sig)
    t.ok(expected.length === given.length && timingSafeEqual(expected, given), 'the signature verifies over data.raw')
    t.not(event.data.sig, 'sha256=' + hmacHex('wrong-secret', event.data.raw))
  },
)
