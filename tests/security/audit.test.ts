// The audit log as a security review reads it: who changed what, from where, and who was refused,
// with no secret in any entry (not a token, not the signing key, not a webhook's ID, not a body).
import t from 'tap'
import { eventually, startServer, TEST_SIGNING_KEY } from '../helpers/server.ts'

t.test('changes and refusals are audited, with no secret in an entry', async (t) => {
  const server = await startServer({ mode: 'start' })
  t.teardown(() => server.stop())
  const call = async (bearer: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, body: await res.json() }
  }
  const editor = (await call(TEST_SIGNING_KEY, 'POST', '/v1/tokens', { name: 'ci', role: 'editor' })).body.data.token
  const viewer = (await call(TEST_SIGNING_KEY, 'POST', '/v1/tokens', { name: 'contractor', role: 'viewer' })).body.data
    .token
  const hook = (
    await call(editor, 'POST', '/v1/webhooks', {
      name: 'orders',
      transform: 'function transform(e) { return { name: "x", data: e } }',
    })
  ).body.data
  t.equal((await call(viewer, 'POST', `/v1/webhooks/${hook.id}/pause`)).status, 403)
  const key = (await call(editor, 'POST', '/v1/keys', { env: 'production' })).body.data

  const entries = await eventually(async () => {
    const { body } = await call(TEST_SIGNING_KEY, 'GET', '/v1/audit')
    return body.data.length >= 5 ? body.data : undefined
  })
  const byAction = (action: string, name?: string) =>
    entries.find((e: any) => e.action === action && (name === undefined || e.actor.name === name))
  t.match(byAction('tokens:admin'), {
    actor: { kind: 'signing-key' },
    method: 'POST',
    route: '/v1/tokens',
    status: 201,
  })
  t.match(byAction('webhooks:write', 'ci'), {
    actor: { kind: 'token', name: 'ci' },
    route: '/v1/webhooks',
    status: 201,
  })
  t.match(byAction('webhooks:write', 'contractor'), { status: 403, route: '/v1/webhooks/:id/pause' }, 'a refusal too')
  t.match(byAction('keys:write'), { target: { created: key.id }, address: '127.0.0.1' })
  const text = JSON.stringify(entries)
  for (const [what, secret] of [
    ['the signing key', TEST_SIGNING_KEY],
    ["the editor's token", editor],
    ["the viewer's token", viewer],
    ["the webhook's ID", hook.id],
    ['the event key', key.key],
    ["the transform's body", 'function transform'],
  ])
    t.notOk(text.includes(secret), `no ${what} in the audit log`)
  t.match(byAction('webhooks:write', 'ci').target.created, /^\{[0-9a-f]{8}\}$/, "a webhook's ID as its fingerprint")
  const filtered = (await call(TEST_SIGNING_KEY, 'GET', '/v1/audit?actor=ci')).body.data
  t.ok(filtered.length >= 2 && filtered.every((e: any) => e.actor.name === 'ci'), 'filtered by actor')
  t.equal((await call(editor, 'GET', '/v1/audit')).status, 403, "reading it is an admin's")
  t.equal((await call(TEST_SIGNING_KEY, 'GET', '/v1/audit?limit=0')).status, 400, 'bad input is named')
})

t.test('sluice audit prints the log', async (t) => {
  const { execFile } = await import('node:child_process')
  const { promisify } = await import('node:util')
  const { join } = await import('node:path')
  const { ROOT } = await import('../helpers/server.ts')
  const server = await startServer({ mode: 'start' })
  t.teardown(() => server.stop())
  await fetch(`${server.url}/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_SIGNING_KEY}`, 'content-type': 'application/json' },
    body: '{"env":"production"}',
  })
  const run = () =>
    promisify(execFile)(
      process.execPath,
      ['--no-node-snapshot', '--conditions=sluice-source', join(ROOT, 'bin/sluice.js'), 'audit', '--limit', '10'],
      { env: { ...process.env, SLUICE_URL: server.url, SLUICE_SIGNING_KEY: TEST_SIGNING_KEY } },
    ).then((r) => JSON.parse(r.stdout).data)
  const entries = await eventually(async () => ((await run()).length > 0 ? run() : undefined))
  t.match(entries[0], { action: 'keys:write', actor: { kind: 'signing-key' } })
})
