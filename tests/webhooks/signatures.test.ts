// Built-in signature verification: each preset is checked on the raw body before the
// transform runs; a failed check dead-letters the request with the reason, and the sender
// still gets its 200 (providers retry on anything else, which would not help).
import t from 'tap'
import { postJson, startServer } from '../helpers/server.ts'
import { createWebhook, deliver, hmacBase64, hmacHex, outcome, patchWebhook } from './helpers.ts'
import {
  githubHeaders,
  githubPullRequestOpened,
  shopifyHeaders,
  shopifyOrderCreate,
  stripeInvoicePaid,
} from './payloads.ts'

const server = await startServer()
t.teardown(() => server.stop())

async function statusOf(hook: { url: string; id: string }, body: string, headers: Record<string, string>) {
  const sent = await deliver(hook.url, body, headers)
  if (sent.status !== 200) throw new Error(`refused: ${JSON.stringify(sent.body)}`)
  const result = await outcome(server.url, hook.id, sent.body.request_id)
  return { status: result.status as string, error: result.error, requestId: sent.body.request_id as string }
}

const nowSeconds = () => String(Math.floor(Date.now() / 1000))

t.test('github: X-Hub-Signature-256 over the raw body', async (t) => {
  const secret = 'github-secret-abc'
  const hook = await createWebhook(server.url, { name: 'GitHub', verification: { preset: 'github', secret } })
  const body = JSON.stringify(githubPullRequestOpened)
  t.equal(
    (await statusOf(hook, body, { ...githubHeaders, 'X-Hub-Signature-256': 'sha256=' + hmacHex(secret, body) })).status,
    'delivered',
  )
  const tampered = await statusOf(hook, body.replace('"opened"', '"closed"'), {
    ...githubHeaders,
    'X-Hub-Signature-256': 'sha256=' + hmacHex(secret, body),
  })
  t.same(tampered.error, { code: 'SIGNATURE_INVALID', message: 'github: X-Hub-Signature-256 does not match the body' })
  const unsigned = await statusOf(hook, body, githubHeaders)
  t.equal(unsigned.error.message, 'github: the X-Hub-Signature-256 header is missing')
})

t.test('stripe: t and v1 of Stripe-Signature, within 5 minutes of receipt; any of several v1 may match', async (t) => {
  const secret = 'whsec_5f8a1c0e2b7d4a9c'
  const hook = await createWebhook(server.url, { name: 'Stripe', verification: { preset: 'stripe', secret } })
  const body = JSON.stringify(stripeInvoicePaid)
  const ts = nowSeconds()
  const signed = `t=${ts},v1=${hmacHex('whsec_old_secret_value', `${ts}.${body}`)},v1=${hmacHex(secret, `${ts}.${body}`)}`
  t.equal((await statusOf(hook, body, { 'Stripe-Signature': signed })).status, 'delivered')
  const staleTs = String(Number(ts) - 3600)
  const stale = await statusOf(hook, body, {
    'Stripe-Signature': `t=${staleTs},v1=${hmacHex(secret, `${staleTs}.${body}`)}`,
  })
  t.match(stale.error.message, /^stripe: the Stripe-Signature timestamp is missing or more than 5 minutes/)
  const wrong = await statusOf(hook, body, {
    'Stripe-Signature': `t=${ts},v1=${hmacHex('nope-nope-nope', `${ts}.${body}`)}`,
  })
  t.equal(wrong.error.message, 'stripe: no v1 signature in Stripe-Signature matches the body')
})

t.test('slack: v0 signature over v0:timestamp:body', async (t) => {
  const secret = '8f742231b10e8888abcd99yyyzzz85a5'
  const hook = await createWebhook(server.url, { name: 'Slack', verification: { preset: 'slack', secret } })
  const body = 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&command=%2Fweather&text=94070'
  const ts = nowSeconds()
  const headers = { 'content-type': 'application/x-www-form-urlencoded', 'X-Slack-Request-Timestamp': ts }
  t.equal(
    (await statusOf(hook, body, { ...headers, 'X-Slack-Signature': 'v0=' + hmacHex(secret, `v0:${ts}:${body}`) }))
      .status,
    'delivered',
  )
  const wrong = await statusOf(hook, body, {
    ...headers,
    'X-Slack-Signature': 'v0=' + hmacHex(secret, `v0:${ts}:${body}x`),
  })
  t.equal(wrong.error.code, 'SIGNATURE_INVALID')
})

t.test('shopify: base64 X-Shopify-Hmac-Sha256', async (t) => {
  const secret = 'shpss_0123456789abcdef'
  const hook = await createWebhook(server.url, { name: 'Shopify', verification: { preset: 'shopify', secret } })
  const body = JSON.stringify(shopifyOrderCreate)
  t.equal(
    (await statusOf(hook, body, { ...shopifyHeaders, 'X-Shopify-Hmac-Sha256': hmacBase64(secret, body) })).status,
    'delivered',
  )
  const wrong = await statusOf(hook, body, {
    ...shopifyHeaders,
    'X-Shopify-Hmac-Sha256': hmacBase64('other-secret', body),
  })
  t.equal(wrong.error.message, 'shopify: X-Shopify-Hmac-Sha256 does not match the body')
})

t.test('hmac-sha256: a configurable header, hex or base64, with or without sha256=', async (t) => {
  const secret = 'generic-secret-42'
  const hook = await createWebhook(server.url, {
    name: 'Generic',
    verification: { preset: 'hmac-sha256', secret, header: 'X-Acme-Signature' },
  })
  const body = '{"event":"build.finished","id":"b_1"}'
  for (const signature of [hmacHex(secret, body), hmacBase64(secret, body), 'sha256=' + hmacHex(secret, body)]) {
    t.equal((await statusOf(hook, body, { 'X-Acme-Signature': signature })).status, 'delivered', signature)
  }
  const missing = await statusOf(hook, body, { 'X-Signature': hmacHex(secret, body) })
  t.equal(missing.error.message, 'hmac-sha256: the X-Acme-Signature header is missing')
})

t.test('a request that failed verification replays after the secret is corrected', async (t) => {
  const hook = await createWebhook(server.url, {
    name: 'Rotated',
    verification: { preset: 'github', secret: 'the-old-secret' },
  })
  const body = JSON.stringify(githubPullRequestOpened)
  const failed = await statusOf(hook, body, {
    ...githubHeaders,
    'X-Hub-Signature-256': 'sha256=' + hmacHex('the-new-secret', body),
  })
  t.equal(failed.status, 'failed')
  await patchWebhook(server.url, hook.id, { verification: { preset: 'github', secret: 'the-new-secret' } })
  await postJson(`${server.url}/v1/webhooks/${hook.id}/requests/${failed.requestId}/replay`, {})
  t.equal((await outcome(server.url, hook.id, failed.requestId, 2)).status, 'delivered')
})
