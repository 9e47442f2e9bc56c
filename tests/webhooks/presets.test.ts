// Each signature preset against its provider's own test vector or reference library where one
// exists (Standard Webhooks: the spec's vector and the `standardwebhooks` library; Twilio and
// Square: the vectors of their docs and SDK tests), else against the documented algorithm written
// out here; then per preset: valid, tampered body, wrong secret, stale timestamp, rotated key.
import { createHash, createHmac } from 'node:crypto'
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import type { RawWebhookRequest } from '../../core/raw-request.ts'
import type { VerificationPreset, WebhookVerification } from '../../control/types.ts'
import { PRESET_FACTS } from '../../control/presets.ts'
import { verifySignature } from '../../transformer/verify.ts'

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0)

function request(
  body: string,
  headers: Record<string, string>,
  extra: Partial<RawWebhookRequest> = {},
): RawWebhookRequest {
  return {
    requestId: '01JZZZZZZZZZZZZZZZZZZZZZZZ',
    webhookId: 'wh_test',
    attempt: 1,
    receivedAt: NOW,
    ip: '127.0.0.1',
    headers: { 'Content-Type': 'application/json', ...headers },
    query: {},
    body,
    bodyEncoding: 'utf8',
    ...extra,
  }
}

const hmac = (algorithm: 'sha1' | 'sha256', key: string | Buffer, data: string) =>
  createHmac(algorithm, key).update(data)

t.test('standard-webhooks: the specification test vector', async (t) => {
  const verification: WebhookVerification = {
    preset: 'standard-webhooks',
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }
  const headers = {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  }
  const at = { receivedAt: 1614265330_000 }
  t.same(verifySignature(verification, request('{"test": 2432232314}', headers, at)), { ok: true })
  t.same(verifySignature(verification, request('{"test": 2432232315}', headers, at)), {
    ok: false,
    reason: 'standard-webhooks: no v1 signature in webhook-signature matches the body',
  })
})

t.test('standard-webhooks: agrees with the reference library on what it signs and refuses', async (t) => {
  const secret = 'whsec_' + Buffer.from('a-24-byte-key-for-tests!').toString('base64')
  const next = 'whsec_' + Buffer.from('the-next-key-of-32-bytes-long!!!').toString('base64')
  const library = new Webhook(secret)
  const body = '{"type":"user.created","data":{"id":"user_29w83sxmDNGwOuEthce5gg56FcC"}}'
  const now = new Date()
  const signed = (id: string, at: Date, payload: string, by = library) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': by.sign(id, at, payload),
  })
  const verdict = (v: WebhookVerification, headers: Record<string, string>, payload = body) =>
    verifySignature(v, request(payload, headers, { receivedAt: now.getTime() })).ok
  const libraryVerdict = (headers: Record<string, string>, payload = body) => {
    try {
      library.verify(payload, headers)
      return true
    } catch {
      return false
    }
  }
  const config: WebhookVerification = { preset: 'standard-webhooks', secret }
  const good = signed('msg_1', now, body)
  t.equal(verdict(config, good), true, 'valid')
  t.equal(libraryVerdict(good), true)
  t.equal(verdict(config, good, body.replace('user_', 'usr_')), false, 'tampered body')
  t.equal(libraryVerdict(good, body.replace('user_', 'usr_')), false)
  const byOther = signed('msg_1', now, body, new Webhook(next))
  t.equal(verdict(config, byOther), false, 'wrong secret')
  t.equal(libraryVerdict(byOther), false)
  const old = signed('msg_1', new Date(now.getTime() - 6 * 60_000), body)
  t.equal(verdict(config, old), false, 'stale timestamp')
  t.equal(libraryVerdict(old), false)
  // Several signatures, space-separated: the sender signs with each key it holds while rotating.
  const both = { ...byOther, 'webhook-signature': `${byOther['webhook-signature']} ${good['webhook-signature']}` }
  t.equal(verdict(config, both), true, 'one of several signatures valid')
  t.equal(libraryVerdict(both), true)
  // The receiver rotates: the new key is `secret`, the old one `previous_secret`, both accepted.
  const rotating: WebhookVerification = { preset: 'standard-webhooks', secret: next, previousSecret: secret }
  t.equal(verdict(rotating, good), true, 'signed with the previous secret')
  t.equal(verdict(rotating, byOther), true, 'signed with the new secret')
  t.equal(verdict({ preset: 'standard-webhooks', secret: next }, good), false, 'the previous one removed')
  const missing = verifySignature(config, request(body, { 'webhook-id': 'msg_1' }))
  t.match(missing, { ok: false, reason: /webhook-timestamp and webhook-signature headers are all required/ })
})

t.test("twilio: the docs' form-parameter vector, and a JSON body through bodySHA256", async (t) => {
  const form = 'CallSid=CA1234567890ABCDE&Caller=%2B12349013030&Digits=1234&From=%2B12349013030&To=%2B18005551212'
  const verification: WebhookVerification = {
    preset: 'twilio',
    secret: '12345',
    publicUrl: 'https://mycompany.com/myapp.php',
  }
  const formRequest = (signature: string, body = form, secret = verification) =>
    verifySignature(
      secret,
      request(
        body,
        { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signature },
        { query: { foo: ['1'], bar: ['2'] } },
      ),
    )
  t.same(formRequest('0/KCTR6DLpKmkAf8muzZqo1nDgQ='), { ok: true }, 'the documented vector')
  t.match(formRequest('0/KCTR6DLpKmkAf8muzZqo1nDgQ=', form.replace('Digits=1234', 'Digits=9999')), {
    ok: false,
    reason: 'twilio: X-Twilio-Signature does not match public_url + the query string + the parameters',
  })
  t.equal(formRequest('0/KCTR6DLpKmkAf8muzZqo1nDgQ=', form, { ...verification, secret: '54321' }).ok, false)
  t.equal(
    formRequest('0/KCTR6DLpKmkAf8muzZqo1nDgQ=', form, { ...verification, secret: '54321', previousSecret: '12345' }).ok,
    true,
    'rotated: the previous auth token still accepted',
  )
  t.equal(
    formRequest('0/KCTR6DLpKmkAf8muzZqo1nDgQ=', form, {
      ...verification,
      publicUrl: 'https://mycompany.com:443/myapp.php',
    }).ok,
    true,
    'the URL with or without its default port, as twilio-node accepts',
  )
  const json = '{"CallSid":"CA1234567890ABCDE","Caller":"+12349013030"}'
  const sha = createHash('sha256').update(json).digest('hex')
  const url = `https://mycompany.com/myapp.php?bodySHA256=${sha}`
  const signature = hmac('sha1', '12345', url).digest('base64')
  const jsonRequest = (body: string) =>
    verifySignature(verification, request(body, { 'X-Twilio-Signature': signature }, { query: { bodySHA256: [sha] } }))
  t.same(jsonRequest(json), { ok: true })
  t.same(jsonRequest(json.replace('+1234', '+9999')), {
    ok: false,
    reason: 'twilio: the bodySHA256 query parameter does not match the body',
  })
})

t.test("square: the vector of Square's SDK tests", async (t) => {
  const body =
    '{"merchant_id":"MLEFBHHSJGVHD","type":"webhooks.test_notification",' +
    '"event_id":"ac3ac95b-f97d-458c-a6e6-18981597e05f","created_at":"2022-07-13T20:30:59.037339943Z",' +
    '"data":{"type":"webhooks","id":"bc368e64-01aa-407e-b46e-3231809b1129"}}'
  const verification: WebhookVerification = {
    preset: 'square',
    secret: 'Ibxx_5AKakO-3qeNVR61Dw',
    publicUrl: 'https://webhook.site/679a4f3a-dcfa-49ee-bac5-9d0edad886b9',
  }
  const check = (v: WebhookVerification, payload = body) =>
    verifySignature(
      v,
      request(payload, { 'x-square-hmacsha256-signature': 'GF4YkrJgGBDZ9NIYbNXBnMzqb2HoL4RW/S6vkZ9/2N4=' }),
    )
  t.same(check(verification), { ok: true })
  t.equal(check(verification, body.replace('MLEF', 'MLEG')).ok, false, 'tampered body')
  t.equal(check({ ...verification, secret: 'another-signature-key' }).ok, false, 'wrong key')
  t.equal(check({ ...verification, publicUrl: 'https://webhook.site/other' }).ok, false, 'another URL')
  t.equal(check({ ...verification, secret: 'another-signature-key', previousSecret: verification.secret }).ok, true)
})

/** The presets whose providers publish no vector: each signs as its docs describe, written out independently here. */
interface Signer {
  preset: VerificationPreset
  sign(secret: string, body: string, at: number): Record<string, string>
  body: string
  /** Linear: the timestamp is in the body. */
  bodyAt?(at: number): string
}

const signers: Signer[] = [
  {
    preset: 'linear',
    body: '',
    bodyAt: (at) => JSON.stringify({ action: 'create', type: 'Issue', data: { id: 'i1' }, webhookTimestamp: at }),
    sign: (secret, body) => ({ 'Linear-Signature': hmac('sha256', secret, body).digest('hex') }),
  },
  {
    preset: 'paddle',
    body: '{"event_id":"evt_01h8bzakzx3hm2fmen703n5q45","event_type":"transaction.paid","data":{"id":"txn_1"}}',
    sign: (secret, body, at) => {
      const ts = Math.floor(at / 1000)
      return { 'Paddle-Signature': `ts=${ts};h1=${hmac('sha256', secret, `${ts}:${body}`).digest('hex')}` }
    },
  },
  {
    preset: 'intercom',
    body: JSON.stringify({
      type: 'notification_event',
      id: 'notif_ccd8a4d2-c7c1-4d3e-8a1b-1b6a4a4c5b7e',
      topic: 'conversation.user.created',
    }),
    sign: (secret, body) => ({ 'X-Hub-Signature': 'sha1=' + hmac('sha1', secret, body).digest('hex') }),
  },
  {
    preset: 'zendesk',
    body: '{"type":"zen:event-type:ticket.created","detail":{"id":"35436"}}',
    sign: (secret, body, at) => {
      const timestamp = new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z')
      return {
        'X-Zendesk-Webhook-Signature': hmac('sha256', secret, timestamp + body).digest('base64'),
        'X-Zendesk-Webhook-Signature-Timestamp': timestamp,
      }
    },
  },
]

// Zendesk's docs sign their test requests with this secret, used as is (not base64-decoded).
const SECRETS = { current: 'dGhpc19zZWNyZXRfaXNfZm9yX3Rlc3Rpbmdfb25seQ==', old: 'pdl_ntfset_old_secret_value' }

for (const signer of signers) {
  t.test(`${signer.preset}: valid, tampered body, wrong secret, stale timestamp, rotated key`, async (t) => {
    const verification: WebhookVerification = { preset: signer.preset, secret: SECRETS.current }
    const bodyAt = (at: number) => signer.bodyAt?.(at) ?? signer.body
    const check = (v: WebhookVerification, secret: string, at = NOW, tamper = false) => {
      const body = bodyAt(at)
      const sent = tamper ? body.replace('}', ',"x":1}') : body
      return verifySignature(v, request(sent, signer.sign(secret, body, at)))
    }
    t.same(check(verification, SECRETS.current), { ok: true }, 'valid')
    t.match(check(verification, SECRETS.current, NOW, true), { ok: false, reason: /match(es)? the body/ })
    t.match(check(verification, 'another-secret-entirely'), { ok: false, reason: new RegExp(`^${signer.preset}: `) })
    const rotating = { ...verification, secret: 'the-new-secret-1', previousSecret: SECRETS.current }
    t.same(check(rotating, SECRETS.current), { ok: true }, 'signed with the previous secret')
    t.same(check(rotating, 'the-new-secret-1'), { ok: true }, 'signed with the new secret')
    if (PRESET_FACTS[signer.preset].timestamped) {
      t.match(check(verification, SECRETS.current, NOW - 301_000), {
        ok: false,
        reason: /is missing or more than 5 minutes from the receive time$/,
      })
      t.same(check(verification, SECRETS.current, NOW - 299_000), { ok: true }, 'inside the default 5 minutes')
      const strict = { ...verification, toleranceSeconds: 30 }
      t.match(check(strict, SECRETS.current, NOW - 31_000), { reason: /more than 30 seconds from the receive time/ })
      t.same(check(strict, SECRETS.current, NOW + 29_000), { ok: true })
    }
  })
}

t.test('stripe and slack honour the per-webhook tolerance too', async (t) => {
  const body = '{"id":"evt_1","type":"invoice.paid"}'
  const stripeAt = (ts: number, v: WebhookVerification) => {
    const t = Math.floor(ts / 1000)
    const sig = hmac('sha256', v.secret, `${t}.${body}`).digest('hex')
    return verifySignature(v, request(body, { 'Stripe-Signature': `t=${t},v1=${sig}` }))
  }
  const stripe: WebhookVerification = { preset: 'stripe', secret: 'whsec_stripe_test', toleranceSeconds: 600 }
  t.same(stripeAt(NOW - 540_000, stripe), { ok: true }, '9 minutes old, tolerance 10 minutes')
  t.match(stripeAt(NOW - 660_000, stripe), { reason: /more than 10 minutes from the receive time/ })
})

t.test('a stored request verifies against its receive time, however late it is replayed', async (t) => {
  const receivedAt = NOW - 30 * 24 * 3600_000
  const body = '{"event_id":"evt_late"}'
  const ts = Math.floor(receivedAt / 1000)
  const sig = hmac('sha256', 'paddle-secret-1', `${ts}:${body}`).digest('hex')
  const stored = request(body, { 'Paddle-Signature': `ts=${ts};h1=${sig}` }, { receivedAt, attempt: 3 })
  t.same(verifySignature({ preset: 'paddle', secret: 'paddle-secret-1' }, stored), { ok: true })
})
