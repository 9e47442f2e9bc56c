// Provider retries deduplicated: when the transform gives no `id`, the preset's delivery ID is the
// events' dedup key, so a redelivery is stored once and recorded as a duplicate, as the Event
// API's `id` is. Overridable per webhook (`delivery_id`: a header, or "none"). And the bad
// settings of a preset are refused with VERIFICATION_INVALID, changing nothing.
import { createHmac } from 'node:crypto'
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { eventually, getJson, postJson, startServer } from '../helpers/server.ts'
import { createWebhook, deliver, hmacHex, outcome, patchWebhook } from './helpers.ts'
import { githubHeaders, githubPullRequestOpened } from './payloads.ts'

const server = await startServer()
t.teardown(() => server.stop())

async function delivered(hook: { url: string; id: string }, body: string, headers: Record<string, string>) {
  const sent = await deliver(hook.url, body, headers)
  t.equal(sent.status, 200)
  const result = await outcome(server.url, hook.id, sent.body.request_id)
  if (result.status !== 'delivered') throw new Error(`not delivered: ${JSON.stringify(result.error)}`)
  return result
}

/** Every stored copy of the events with this id, duplicates included, once `count` are there. */
const copiesOf = (id: string, count: number) =>
  eventually(async () => {
    const r = await getJson(`${server.url}/v1/events?id=${encodeURIComponent(id)}&include_duplicates=true`)
    return r.body.data.length === count ? r.body.data : undefined
  })

t.test('github: a redelivery with the same X-GitHub-Delivery is stored once, the copy a duplicate', async (t) => {
  const secret = 'github-delivery-secret'
  const hook = await createWebhook(server.url, { name: 'GitHub dedup', verification: { preset: 'github', secret } })
  t.equal(hook.delivery_id, 'header:X-GitHub-Delivery')
  const body = JSON.stringify(githubPullRequestOpened)
  const delivery = '72d3162e-cc78-11e3-81ab-4c9367dc0958'
  const headers = {
    ...githubHeaders,
    'X-GitHub-Delivery': delivery,
    'X-Hub-Signature-256': 'sha256=' + hmacHex(secret, body),
  }
  const first = await delivered(hook, body, headers)
  const again = await delivered(hook, body, headers)
  t.not(first.request_id, again.request_id, 'two requests captured')
  const copies = await copiesOf(delivery, 2)
  const original = copies.find((e: any) => e.internal_id === first.event_ids[0])
  const copy = copies.find((e: any) => e.internal_id === again.event_ids[0])
  t.equal(original.duplicate_of, undefined)
  t.equal(copy.duplicate_of, original.internal_id, 'the redelivery is recorded as a duplicate of the first')
  const live = await getJson(`${server.url}/v1/events?id=${delivery}`)
  t.same(
    live.body.data.map((e: any) => e.internal_id),
    [first.event_ids[0]],
    'stored once',
  )
  const other = await delivered(hook, body, { ...headers, 'X-GitHub-Delivery': 'a-different-delivery' })
  t.equal((await copiesOf('a-different-delivery', 1))[0].internal_id, other.event_ids[0], 'another delivery is new')
})

t.test(
  'standard-webhooks: a retry, signed again at a later time, keeps its webhook-id and is a duplicate',
  async (t) => {
    const secret = 'whsec_' + Buffer.from('standard-webhooks-dedup-key!').toString('base64')
    const hook = await createWebhook(server.url, {
      name: 'Clerk',
      verification: { preset: 'standard-webhooks', secret },
      transform:
        'function transform(evt) {' +
        ' return [{ name: "clerk/" + evt.type, data: evt.data }, { name: "clerk/any", data: {} }] }',
    })
    const sender = new Webhook(secret)
    const body = '{"type":"user.created","data":{"id":"user_2"}}'
    const send = (at: Date) => ({
      'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': sender.sign('msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', at, body),
    })
    const first = await delivered(hook, body, send(new Date(Date.now() - 60_000)))
    const retry = await delivered(hook, body, send(new Date()))
    const copies = await copiesOf('msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', 2)
    t.equal(copies.find((e: any) => e.internal_id === retry.event_ids[0]).duplicate_of, first.event_ids[0])
    const second = await copiesOf('msg_2KWPBgLlAfxdpx2AI54pPJ85f4W:1', 2)
    t.equal(
      second.find((e: any) => e.internal_id === retry.event_ids[1]).duplicate_of,
      first.event_ids[1],
      "a request's second event is keyed <delivery ID>:1",
    )
  },
)

t.test('delivery_id: another header, or none; a transform that sets id keeps it', async (t) => {
  const hook = await createWebhook(server.url, { name: 'Custom', delivery_id: 'X-Request-Id' })
  t.equal(hook.delivery_id, 'header:X-Request-Id')
  const first = await delivered(hook, '{"n":1}', { 'X-Request-Id': 'req-77' })
  const again = await delivered(hook, '{"n":1}', { 'X-Request-Id': 'req-77' })
  t.equal(
    (await copiesOf('req-77', 2)).find((e: any) => e.internal_id === again.event_ids[0]).duplicate_of,
    first.event_ids[0],
  )

  const patched = await patchWebhook(server.url, hook.id, { delivery_id: 'none' })
  t.equal(patched.body.data.delivery_id, 'none')
  const a = await delivered(hook, '{"n":2}', { 'X-Request-Id': 'req-78' })
  const b = await delivered(hook, '{"n":2}', { 'X-Request-Id': 'req-78' })
  const events = await Promise.all(
    [a, b].map((r) => eventually(async () => (await getJson(`${server.url}/v1/events/${r.event_ids[0]}`)).body.data)),
  )
  t.same(
    events.map((e) => e.duplicate_of),
    [undefined, undefined],
    'with none, each request is its own',
  )
  t.not(events[0].id, 'req-78')

  const own = await createWebhook(server.url, {
    name: 'Own id',
    delivery_id: 'X-Request-Id',
    transform: 'function transform(evt) { return { name: "own/x", id: "mine-" + evt.n, data: evt } }',
  })
  const mine = await delivered(own, '{"n":3}', { 'X-Request-Id': 'req-79' })
  const stored = await eventually(async () => (await getJson(`${server.url}/v1/events/${mine.event_ids[0]}`)).body.data)
  t.equal(stored.id, 'mine-3', "the transform's id wins")
})

t.test('bad settings are a 400 VERIFICATION_INVALID naming the field, and change nothing', async (t) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ preset: 'standard-webhooks', secret: 'whsec_not base64 at all!' }, /^verification\.secret: must be whsec_/],
    [
      { preset: 'standard-webhooks', secret: 'whsec_' + Buffer.from('too short').toString('base64') },
      /^verification\.secret: /,
    ],
    [
      {
        preset: 'standard-webhooks',
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        previous_secret: 'whsec_%%%%%%%%',
      },
      /^verification\.previous_secret: /,
    ],
    [
      { preset: 'stripe', secret: 'whsec_0123456789', tolerance_seconds: 4 },
      /^verification\.tolerance_seconds: .* 5 to 3600/,
    ],
    [{ preset: 'stripe', secret: 'whsec_0123456789', tolerance_seconds: 3601 }, /^verification\.tolerance_seconds: /],
    [
      { preset: 'github', secret: 'whsec_0123456789', tolerance_seconds: 60 },
      /^verification\.tolerance_seconds: the github preset signs no timestamp/,
    ],
    [
      { preset: 'twilio', secret: '0123456789abcdef0123456789abcdef' },
      /^verification\.public_url: required for the twilio preset/,
    ],
    [
      { preset: 'square', secret: 'square-key-01', public_url: 'ftp://example.com/x' },
      /^verification\.public_url: must be an absolute http/,
    ],
    [
      { preset: 'square', secret: 'square-key-01', public_url: 'https://example.com/x?a=1' },
      /^verification\.public_url: give it without a query/,
    ],
    [
      { preset: 'github', secret: 'github-secret-1', public_url: 'https://example.com/x' },
      /^verification\.public_url: the github preset does not sign a URL/,
    ],
  ]
  const before = (await getJson(`${server.url}/v1/webhooks`)).body.data.length
  for (const [verification, message] of cases) {
    const response = await postJson(`${server.url}/v1/webhooks`, { name: 'bad', verification })
    t.same([response.status, response.body.code], [400, 'VERIFICATION_INVALID'], JSON.stringify(verification))
    t.match(response.body.error, message)
  }
  t.equal((await getJson(`${server.url}/v1/webhooks`)).body.data.length, before, 'nothing created')
  const badHeader = await postJson(`${server.url}/v1/webhooks`, { name: 'bad', delivery_id: 'not a header' })
  t.same([badHeader.status, badHeader.body.code], [400, 'REQUEST_INVALID'])
  t.match(badHeader.body.error, /^delivery_id: /)

  const hook = await createWebhook(server.url, {
    name: 'Paddle',
    verification: { preset: 'paddle', secret: 'pdl_ntfset_01_secret', tolerance_seconds: 60 },
  })
  t.same(hook.verification, {
    preset: 'paddle',
    header: null,
    public_url: null,
    tolerance_seconds: 60,
    rotating: false,
  })
  t.equal(hook.delivery_id, 'body:event_id')
  const refused = await patchWebhook(server.url, hook.id, {
    name: 'renamed',
    verification: { preset: 'paddle', secret: 'pdl_ntfset_02_secret', tolerance_seconds: 0 },
  })
  t.same([refused.status, refused.body.code], [400, 'VERIFICATION_INVALID'])
  const after = (await getJson(`${server.url}/v1/webhooks/${hook.id}`)).body.data
  t.same([after.name, after.verification.tolerance_seconds], ['Paddle', 60], 'the patch changed nothing')
})

const TWILIO_TOKEN = '0123456789abcdef0123456789abcdef'

t.test("twilio over HTTP: the webhook's public_url and the query string it was called with", async (t) => {
  const hook = await createWebhook(server.url, {
    name: 'Twilio',
    verification: { preset: 'twilio', secret: TWILIO_TOKEN, public_url: 'https://mycompany.com/myapp.php' },
  })
  t.equal((hook.verification as { public_url: string }).public_url, 'https://mycompany.com/myapp.php')
  t.equal(hook.delivery_id, 'header:I-Twilio-Idempotency-Token')
  const form = 'CallSid=CA1234567890ABCDE&Caller=%2B12349013030&Digits=1234&From=%2B12349013030&To=%2B18005551212'
  const headers = {
    'content-type': 'application/x-www-form-urlencoded',
    // Twilio's algorithm: the URL called, then each parameter sorted by name as name + value.
    'X-Twilio-Signature': createHmac('sha1', TWILIO_TOKEN)
      .update('https://mycompany.com/myapp.php?foo=1&bar=2' + 'CallSidCA1234567890ABCDECaller+12349013030Digits1234')
      .update('From+12349013030To+18005551212')
      .digest('base64'),
    'I-Twilio-Idempotency-Token': 'idem-1',
  }
  const ok = await deliver(`${hook.url}?foo=1&bar=2`, form, headers)
  t.equal((await outcome(server.url, hook.id, ok.body.request_id)).status, 'delivered')
  const moved = await deliver(`${hook.url}?foo=1&bar=3`, form, headers)
  t.match((await outcome(server.url, hook.id, moved.body.request_id)).error, {
    code: 'SIGNATURE_INVALID',
    message: /^twilio: X-Twilio-Signature does not match/,
  })
})
