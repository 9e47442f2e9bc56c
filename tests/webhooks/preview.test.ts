// Preview: a sample payload (with optional headers and query) through the same sandbox,
// validation and name lists as delivery; nothing is published or recorded.
import t from 'tap'
import { getJson, postJson, startServer } from '../helpers/server.ts'
import { createWebhook } from './helpers.ts'
import { stripeInvoicePaid } from './payloads.ts'

const server = await startServer()
t.teardown(() => server.stop())
const hook = await createWebhook(server.url, {
  name: 'Stripe',
  transform:
    "function transform(evt, headers, query) { return { name: 'stripe/' + evt.type, id: evt.id, ts: evt.created * 1000, data: { livemode: evt.livemode, account: headers['Stripe-Account'] || null, tag: query.tag } } }",
  deny_events: ['stripe/charge.*'],
})
const preview = (body: unknown) => postJson(`${server.url}/v1/webhooks/${hook.id}/preview`, body)

t.test('the saved transform turns the payload (headers and query included) into the event', async (t) => {
  const result = await preview({
    payload: stripeInvoicePaid,
    headers: { 'stripe-account': 'acct_1' },
    query: { tag: 'a' },
  })
  t.equal(result.status, 200)
  t.same(result.body.data, {
    ok: true,
    events: [
      {
        name: 'stripe/invoice.paid',
        id: 'evt_1PqVx2LkdIwHu7ixG5nQ1aBc',
        ts: 1724668530000,
        data: { livemode: false, account: 'acct_1', tag: ['a'] },
      },
    ],
    error: null,
  })
})

t.test('an error comes back as the error, with the code delivery would record', async (t) => {
  const denied = await preview({ payload: { ...stripeInvoicePaid, type: 'charge.refunded' } })
  t.equal(denied.body.data.ok, false)
  t.equal(denied.body.data.error.code, 'EVENT_NAME_DENIED')
  const threw = await preview({
    payload: { ...stripeInvoicePaid, type: 'x' },
    transform: 'function transform(evt) { throw new Error("boom: " + evt.type) }',
  })
  t.equal(threw.body.data.error.code, 'TRANSFORM_THREW')
  t.match(threw.body.data.error.message, /boom: x/)
})

t.test('an unsaved transform can be tried, or null for the default; the saved one is untouched', async (t) => {
  const draft = await preview({
    payload: { type: 'a.b' },
    transform: "function transform(evt) { return { name: 'draft/' + evt.type, data: {} } }",
  })
  t.same(draft.body.data.events, [{ name: 'draft/a.b', data: {} }])
  const fallback = await preview({ payload: { type: 'a.b' }, transform: null })
  t.same(fallback.body.data.events, [{ name: 'webhook/stripe.received', data: { type: 'a.b' } }])
  const raw = await preview({
    raw: 'type=a.b',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    transform: null,
  })
  t.same(
    raw.body.data.events,
    [{ name: 'webhook/stripe.received', data: { type: 'a.b' } }],
    'raw bodies go through the same parsing',
  )
  t.match((await getJson(`${server.url}/v1/webhooks/${hook.id}`)).body.data.transform, /stripe\//)
  t.same((await getJson(`${server.url}/v1/webhooks/${hook.id}/requests`)).body.data, [], 'nothing recorded')
})

t.test('bad preview input is a 400 naming the field', async (t) => {
  const both = await preview({ payload: {}, raw: '{}' })
  t.equal(both.status, 400)
  t.match(both.body.error, /^body\.payload: /)
  const headers = await preview({ payload: {}, headers: { a: 1 } })
  t.match(headers.body.error, /^body\.headers\.a: must be string/)
  const unknownHook = await postJson(`${server.url}/v1/webhooks/wh_nope/preview`, { payload: {} })
  t.equal(unknownHook.status, 404)
})
