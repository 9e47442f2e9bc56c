// Linear's and Paddle's own libraries (@linear/sdk, @paddle/paddle-node-sdk: dev dependencies of the
// tests only) and Sluice's presets agree on what they accept and refuse: a valid signature, a tampered
// body, a wrong secret, a stale timestamp. Neither library signs, so the test signs as the documented
// algorithm says and both judge the same request.
import { createHmac } from 'node:crypto'
import t from 'tap'
import { LinearWebhookClient } from '@linear/sdk/webhooks'
import { Paddle } from '@paddle/paddle-node-sdk'
import type { RawWebhookRequest } from '../../core/raw-request.ts'
import type { WebhookVerification } from '../../control/types.ts'
import { verifySignature } from '../../transformer/verify.ts'

const request = (body: string, headers: Record<string, string>, receivedAt: number): RawWebhookRequest => ({
  requestId: '01JZZZZZZZZZZZZZZZZZZZZZZZ',
  webhookId: 'wh_test',
  attempt: 1,
  receivedAt,
  ip: '127.0.0.1',
  headers: { 'Content-Type': 'application/json', ...headers },
  query: {},
  body,
  bodyEncoding: 'utf8',
})
const hex = (key: string, data: string) => createHmac('sha256', key).update(data).digest('hex')

t.test('linear: @linear/sdk and the preset agree', async (t) => {
  const secret = 'lin_wh_test-secret-1234'
  const verification: WebhookVerification = { preset: 'linear', secret }
  const library = new LinearWebhookClient(secret)
  const libraryAccepts = (body: string, signature: string) => {
    try {
      return library.verify(Buffer.from(body), signature)
    } catch {
      return false
    }
  }
  const now = Date.now()
  const body = (ts: number) =>
    JSON.stringify({ action: 'create', type: 'Issue', data: { id: 'i1' }, webhookTimestamp: ts })
  const cases = [
    { name: 'valid', body: body(now), signature: hex(secret, body(now)), accepted: true },
    { name: 'tampered body', body: body(now).replace('i1', 'i2'), signature: hex(secret, body(now)), accepted: false },
    { name: 'wrong secret', body: body(now), signature: hex('another-secret', body(now)), accepted: false },
    {
      name: 'stale timestamp',
      body: body(now - 3_600_000),
      signature: hex(secret, body(now - 3_600_000)),
      accepted: false,
    },
  ]
  for (const c of cases) {
    t.equal(libraryAccepts(c.body, c.signature), c.accepted, `${c.name}: @linear/sdk`)
    const sluice = verifySignature(verification, request(c.body, { 'Linear-Signature': c.signature }, now))
    t.equal(sluice.ok, c.accepted, `${c.name}: the linear preset`)
  }
})

t.test('paddle: @paddle/paddle-node-sdk and the preset agree', async (t) => {
  const secret = 'pdl_ntfset_01jtest_secretvalue'
  const verification: WebhookVerification = { preset: 'paddle', secret }
  // The client sets up the SDK's Node crypto provider; it calls nothing until asked.
  const library = new Paddle('pdl_sdbx_apikey_test').webhooks
  const now = Date.now()
  const ts = Math.floor(now / 1000)
  const body = JSON.stringify({ event_id: 'evt_01h', event_type: 'transaction.completed', data: { id: 'txn_1' } })
  const sign = (key: string, at: number, text: string) => `ts=${at};h1=${hex(key, `${at}:${text}`)}`
  const cases = [
    { name: 'valid', body, signature: sign(secret, ts, body), accepted: true },
    { name: 'tampered body', body: body.replace('txn_1', 'txn_2'), signature: sign(secret, ts, body), accepted: false },
    { name: 'wrong secret', body, signature: sign('another-secret', ts, body), accepted: false },
    { name: 'stale timestamp', body, signature: sign(secret, ts - 3600, body), accepted: false },
  ]
  for (const c of cases) {
    t.equal(await library.isSignatureValid(c.body, secret, c.signature), c.accepted, `${c.name}: the Paddle SDK`)
    const sluice = verifySignature(verification, request(c.body, { 'Paddle-Signature': c.signature }, now))
    t.equal(sluice.ok, c.accepted, `${c.name}: the paddle preset`)
  }
})
