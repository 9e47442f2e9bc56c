// Webhook events run functions like any event: the whole path from a provider's POST to a
// function run, with the seed's signature pattern verified inside the function.
import t from 'tap'
import { startServer } from '../helpers/server.ts'
import { BASICS, finishedRuns } from '../functions/fixtures/rest.ts'
import { SIGNING_SECRET } from '../functions/fixtures/basics.ts'
import { createWebhook, deliver, hmacHex, outcome } from './helpers.ts'

const server = await startServer({ flags: { functionsFile: BASICS } })
t.teardown(() => server.stop())

// The fixture's `test/signed` function checks a hex HMAC-SHA256 of data.raw against data.sig.
const transform = `function transform(evt, headers, queryParams, raw) {
  return { name: 'test/signed', id: headers['X-Delivery-Id'], data: { raw: raw, sig: headers['X-Signature'] } }
}`

t.test('a signed delivery reaches the function, which verifies raw + sig and handles the payload', async (t) => {
  const hook = await createWebhook(server.url, { name: 'Billing', transform })
  const body = JSON.stringify({ invoice: 'in_42', amount: 1200 })
  const sent = await deliver(hook.url, body, { 'X-Signature': hmacHex(SIGNING_SECRET, body), 'X-Delivery-Id': 'dlv_1' })
  const result = await outcome(server.url, hook.id, sent.body.request_id)
  const [run] = await finishedRuns(server.url, result.event_ids[0])
  t.equal(run.status, 'completed')
  t.same(run.output, { invoice: 'in_42', amount: 1200 })
})

t.test('a forged delivery is refused by the function without retries', async (t) => {
  const hook = await createWebhook(server.url, { name: 'Billing forged', transform })
  const body = JSON.stringify({ invoice: 'in_43', amount: 1 })
  const sent = await deliver(hook.url, body, {
    'X-Signature': hmacHex('attacker-secret', body),
    'X-Delivery-Id': 'dlv_2',
  })
  const result = await outcome(server.url, hook.id, sent.body.request_id)
  const [run] = await finishedRuns(server.url, result.event_ids[0])
  t.same([run.status, run.attempts], ['failed', 1])
})
