// Webhook management over REST and the CLI: create → unguessable URL, update, disable, delete;
// bad input is a 400 naming the field and changes nothing.
import t from 'tap'
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ROOT, TEST_SIGNING_KEY, getJson, postJson, startServer } from '../helpers/server.ts'
import { createWebhook, deliver, patchWebhook } from './helpers.ts'

const server = await startServer()
t.teardown(() => server.stop())
const run = promisify(execFile)

t.test('create returns 201 with an unguessable URL, one per webhook, distinct from event keys', async (t) => {
  const a = await createWebhook(server.url, { name: 'GitHub' })
  const b = await createWebhook(server.url, { name: 'GitHub' })
  t.match(a.id, /^wh_[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url')
  t.not(a.id, b.id)
  t.equal(a.url, `${server.url}/e/${a.id}`)
  t.equal(a.env, 'production', 'production unless said otherwise')
  t.equal(a.transform, null)
  t.same(a.allow_ips, [])
  t.equal(a.disabled, false)
  const listed = await getJson(`${server.url}/v1/webhooks`)
  t.ok(listed.body.data.some((w: any) => w.id === a.id) && listed.body.data.some((w: any) => w.id === b.id))
})

t.test('a webhook belongs to a non-branch environment or to the branch group, never one branch', async (t) => {
  await postJson(`${server.url}/v1/envs`, { name: 'staging' })
  await postJson(`${server.url}/v1/envs`, { name: 'feature-x', branch: true })
  t.equal((await createWebhook(server.url, { name: 'staging hook', env: 'staging' })).env, 'staging')
  t.equal((await createWebhook(server.url, { name: 'preview hook', env: 'branch' })).env, 'branch')
  const branch = await postJson(`${server.url}/v1/webhooks`, { name: 'x', env: 'feature-x' })
  t.equal(branch.status, 400)
  t.match(branch.body.error, /^env: "feature-x" is a branch environment/)
  const missing = await postJson(`${server.url}/v1/webhooks`, { name: 'x', env: 'nope' })
  t.same([missing.status, missing.body.code], [404, 'ENV_NOT_FOUND'])
  const filtered = await getJson(`${server.url}/v1/webhooks?env=staging`)
  t.same(
    filtered.body.data.map((w: any) => w.name),
    ['staging hook'],
  )
})

t.test('bad input is a 400 that names the field, and creates nothing', async (t) => {
  const before = (await getJson(`${server.url}/v1/webhooks`)).body.data.length
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{}, /^body\.name: required/],
    [
      { name: 'x', allow_ips: ['10.0.0.0/33'] },
      /^allow_ips\[0\]: "10\.0\.0\.0\/33": the prefix length must be 0 to 32/,
    ],
    [{ name: 'x', deny_ips: ['not-an-ip'] }, /^deny_ips\[0\]: /],
    [{ name: 'x', allow_events: [''] }, /^allow_events\[0\]: /],
    [{ name: 'x', transform: 'function transform(evt) { return {' }, /^transform: SyntaxError/],
    [
      { name: 'x', verification: { preset: 'paypal', secret: 'whsec_0123456789' } },
      /^body\.verification\.preset: must be one of stripe, github, slack, shopify, hmac-sha256/,
    ],
    [{ name: 'x', verification: { preset: 'github', secret: 'short' } }, /^body\.verification\.secret: /],
    [{ name: 'x', colour: 'blue' }, /^body\.colour: unknown field/],
  ]
  for (const [body, message] of cases) {
    const response = await postJson(`${server.url}/v1/webhooks`, body)
    t.equal(response.status, 400, JSON.stringify(body))
    t.equal(response.body.code, 'REQUEST_INVALID')
    t.match(response.body.error, message)
  }
  t.equal((await getJson(`${server.url}/v1/webhooks`)).body.data.length, before)
})

t.test(
  'update changes name, transform (bumping its version), lists and verification; a bad field changes nothing',
  async (t) => {
    const hook = await createWebhook(server.url, { name: 'Stripe' })
    const updated = await patchWebhook(server.url, hook.id, {
      name: 'Stripe live',
      transform: 'function transform(evt) { return { name: "stripe/" + evt.type, data: evt } }',
      allow_ips: ['3.18.12.63', '2001:db8::/32'],
      deny_events: ['stripe/test.*'],
      verification: { preset: 'stripe', secret: 'whsec_test_secret_value' },
    })
    t.equal(updated.status, 200)
    t.equal(updated.body.data.name, 'Stripe live')
    t.equal(updated.body.data.transform_version, 2)
    t.same(updated.body.data.allow_ips, ['3.18.12.63', '2001:db8::/32'])
    t.same(
      updated.body.data.verification,
      { preset: 'stripe', header: null, public_url: null, tolerance_seconds: 300, rotating: false },
      'the secret is never shown back',
    )
    t.equal(updated.body.data.delivery_id, 'body:id', "Stripe's event id is the default delivery ID")
    const rejected = await patchWebhook(server.url, hook.id, { name: 'renamed', deny_ips: ['1.2.3.4/99'] })
    t.equal(rejected.status, 400)
    t.match(rejected.body.error, /^deny_ips\[0\]: /)
    t.equal(
      (await getJson(`${server.url}/v1/webhooks/${hook.id}`)).body.data.name,
      'Stripe live',
      'the valid field of a rejected patch is not applied',
    )
    const same = await patchWebhook(server.url, hook.id, { name: 'Stripe live 2' })
    t.equal(same.body.data.transform_version, 2, 'the version moves only when the transform does')
    const cleared = await patchWebhook(server.url, hook.id, { transform: null, verification: null })
    t.same(
      [cleared.body.data.transform, cleared.body.data.transform_version, cleared.body.data.verification],
      [null, 3, null],
    )
    const moved = await patchWebhook(server.url, hook.id, { env: 'staging' })
    t.equal(moved.status, 400)
  },
)

t.test('disable refuses deliveries with 403; enable takes them again; delete makes the URL 404', async (t) => {
  const hook = await createWebhook(server.url, { name: 'Shopify' })
  t.equal((await patchWebhook(server.url, hook.id, { disabled: true })).body.data.disabled, true)
  const refused = await deliver(hook.url, { id: 1 })
  t.same([refused.status, refused.body.code], [403, 'WEBHOOK_DISABLED'])
  await patchWebhook(server.url, hook.id, { disabled: false })
  t.equal((await deliver(hook.url, { id: 1 })).status, 200)
  const removed = await fetch(`${server.url}/v1/webhooks/${hook.id}`, { method: 'DELETE' })
  t.equal(removed.status, 200)
  const gone = await deliver(hook.url, { id: 1 })
  t.same([gone.status, gone.body.code], [404, 'NOT_FOUND'])
  t.equal((await getJson(`${server.url}/v1/webhooks/${hook.id}`)).status, 404)
})

t.test('sluice webhooks create | update | delete drive the same API', async (t) => {
  const sluice = (...args: string[]) =>
    run(process.execPath, [
      '--no-node-snapshot',
      '--conditions=sluice-source',
      join(ROOT, 'bin/sluice.js'),
      'webhooks',
      ...args,
      '--url',
      server.url,
    ])
  const transformFile = join(server.dataDir, 'clerk.js')
  await writeFile(transformFile, 'function transform(evt) { return { name: "clerk/" + evt.type, data: evt.data } }')
  const created = JSON.parse(
    (await sluice('create', 'Clerk', '--transform', transformFile, '--allow-event', 'clerk/*')).stdout,
  ).data
  t.equal(created.name, 'Clerk')
  t.match(created.transform, /clerk\//)
  t.same(created.allow_events, ['clerk/*'])
  const updated = JSON.parse(
    (await sluice('update', created.id, '--name', 'Clerk prod', '--disable', '--allow-event=')).stdout,
  ).data
  t.same([updated.name, updated.disabled, updated.allow_events], ['Clerk prod', true, []])
  const signed = JSON.parse(
    (
      await sluice(
        'update',
        created.id,
        '--verify',
        'standard-webhooks',
        '--secret',
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        '--previous-secret',
        'whsec_' + Buffer.from('the-previous-24-byte-key').toString('base64'),
        '--tolerance-seconds',
        '120',
        '--delivery-id',
        'X-Request-Id',
      )
    ).stdout,
  ).data
  t.same(
    [signed.verification, signed.delivery_id],
    [
      { preset: 'standard-webhooks', header: null, public_url: null, tolerance_seconds: 120, rotating: true },
      'header:X-Request-Id',
    ],
  )
  await sluice('delete', created.id)
  t.equal((await getJson(`${server.url}/v1/webhooks/${created.id}`)).status, 404)
  const failed = await sluice('get', 'wh_missing').catch((err) => err)
  t.equal(failed.code, 1, 'an API error exits 1')
})

t.test('in sluice start the REST API needs the signing key, the webhook URL does not', async (t) => {
  const secured = await startServer({ mode: 'start' })
  t.teardown(() => secured.stop())
  const auth = { authorization: `Bearer ${TEST_SIGNING_KEY}` }
  t.equal((await postJson(`${secured.url}/v1/webhooks`, { name: 'x' })).status, 401)
  const created = await postJson(`${secured.url}/v1/webhooks`, { name: 'Stripe' }, auth)
  t.equal(created.status, 201)
  const sent = await deliver(created.body.data.url, { type: 'invoice.paid' })
  t.equal(sent.status, 200, 'the URL is the credential')
  const listed = await getJson(`${secured.url}/v1/webhooks/${created.body.data.id}/requests`)
  t.equal(listed.status, 401)
})
