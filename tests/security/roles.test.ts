// Roles and API tokens on the REST API, as a team uses them: the signing key (admin, the bootstrap
// credential) creates tokens; a viewer reads, an editor changes webhooks and keys, only an admin
// manages tokens and environments; a token narrowed to environments acts only there; a deleted token
// is refused at once; a token is shown once and never listed. Every /v1 route declares a permission.
import t from 'tap'
import Fastify from 'fastify'
import { requirePermission } from '../../api/auth.ts'
import { getJson, startServer, TEST_SIGNING_KEY } from '../helpers/server.ts'

const server = await startServer({ mode: 'start' })
t.teardown(() => server.stop())

async function call(bearer: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() }
}
const admin = (method: string, path: string, body?: unknown) => call(TEST_SIGNING_KEY, method, path, body)
const tokenOf = async (body: unknown) => {
  const created = await admin('POST', '/v1/tokens', body)
  if (created.status !== 201) throw new Error(JSON.stringify(created.body))
  return created.body.data.token as string
}

await admin('POST', '/v1/envs', { name: 'staging' })

t.test('each role does what it holds, and a 403 names the permission', async (t) => {
  const viewer = await tokenOf({ name: 'contractor', role: 'viewer' })
  const editor = await tokenOf({ name: 'ci', role: 'editor' })
  const adminToken = await tokenOf({ name: 'ops', role: 'admin' })
  t.equal((await call(viewer, 'GET', '/v1/webhooks')).status, 200, 'a viewer reads')
  const refused = await call(viewer, 'POST', '/v1/webhooks', { name: 'nope' })
  t.equal(refused.status, 403)
  t.equal(refused.body.code, 'FORBIDDEN')
  t.match(refused.body.error, /permission webhooks:write: needs the role editor; this token's role is viewer/)
  t.same((await admin('GET', '/v1/webhooks')).body.data, [], 'and changed nothing')
  t.equal((await call(editor, 'POST', '/v1/webhooks', { name: 'orders' })).status, 201, 'an editor changes webhooks')
  t.equal((await call(editor, 'POST', '/v1/keys', { env: 'production' })).status, 201, 'and keys')
  t.match((await call(editor, 'POST', '/v1/tokens', { name: 'x', role: 'admin' })).body, {
    code: 'FORBIDDEN',
    error: /tokens:admin/,
  })
  t.equal(
    (await call(editor, 'PATCH', '/v1/envs/staging', { max_body_bytes: 2048 })).status,
    403,
    "settings are an admin's",
  )
  t.equal((await call(adminToken, 'PATCH', '/v1/envs/staging', { max_body_bytes: 2048 })).status, 200)
  t.equal((await call('slt_not-a-token', 'GET', '/v1/webhooks')).status, 401, 'an unknown token')
})

t.test('a token narrowed to environments acts only in them', async (t) => {
  const staging = await tokenOf({ name: 'staging-ci', role: 'editor', envs: ['staging'] })
  t.equal((await call(staging, 'POST', '/v1/keys', { env: 'staging' })).status, 201)
  const other = await call(staging, 'POST', '/v1/keys', { env: 'production' })
  t.equal(other.status, 403)
  t.match(other.body.error, /^env: this token acts in staging only, not in "production"/)
  t.equal((await call(staging, 'GET', '/v1/webhooks?env=staging')).status, 200)
  t.match((await call(staging, 'GET', '/v1/webhooks')).body.error, /name the environment/)
  t.equal((await call(staging, 'PATCH', '/v1/envs/production', { max_body_bytes: 1 })).status, 403)
  await admin('POST', '/v1/envs', { name: 'pr-7', branch: true })
  const branches = await tokenOf({ name: 'previews', role: 'editor', envs: ['branch'] })
  t.equal((await call(branches, 'GET', '/v1/runs?env=pr-7')).status, 200, '"branch" covers a branch env')
  t.equal((await call(branches, 'POST', '/v1/keys', { env: 'branch' })).status, 201, 'and the group')
  t.equal((await call(branches, 'GET', '/v1/runs?env=staging')).status, 403, 'not a standard one')
})

t.test('tokens: shown once, listed without secrets, used, deleted at once; bad input is named', async (t) => {
  const created = await admin('POST', '/v1/tokens', { name: 'reader', role: 'viewer', expires_in_days: 30 })
  t.equal(created.status, 201)
  const { token, id } = created.body.data
  t.match(token, /^slt_/)
  t.ok(Date.parse(created.body.data.expires_at) > Date.now() + 29 * 86_400_000, 'expires in 30 days')
  t.equal((await call(token, 'GET', '/v1/runs')).status, 200)
  const listed = (await admin('GET', '/v1/tokens')).body.data.find((x: { id: string }) => x.id === id)
  t.notOk('token' in listed, 'never listed')
  t.notOk(JSON.stringify((await admin('GET', '/v1/tokens')).body).includes(token), 'nowhere in the list')
  t.ok(listed.last_used_at, 'its last use is shown')
  t.equal((await admin('DELETE', `/v1/tokens/${id}`)).status, 200)
  t.equal((await call(token, 'GET', '/v1/runs')).status, 401, 'refused at once')
  const bad = await admin('POST', '/v1/tokens', { name: 'x', role: 'owner' })
  t.equal(bad.status, 400)
  t.match(bad.body.error, /body\.role/)
  t.equal((await admin('POST', '/v1/tokens', { name: 'ci', role: 'viewer' })).status, 409, 'a name taken')
  t.equal((await admin('POST', '/v1/tokens', { name: 'y', role: 'viewer', envs: ['nowhere'] })).status, 404)
})

t.test('every /v1 route declares a permission; one without stops the server from starting', async (t) => {
  const { body: doc } = await getJson(`${server.url}/v1/openapi.json`, { authorization: `Bearer ${TEST_SIGNING_KEY}` })
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, { description?: string }>>))
    for (const [method, op] of Object.entries(methods))
      if (path.startsWith('/v1/') && path !== '/v1/openapi.json')
        t.match(op.description, /^Permission `[a-z-]+:(read|write|admin)`/, `${method.toUpperCase()} ${path}`)
  const app = Fastify()
  app.addHook('onRoute', requirePermission)
  t.throws(() => app.get('/v1/forgotten', async () => ({})), /GET \/v1\/forgotten declares no permission/)
})

t.test('sluice tokens create | list | remove, and a control command run with SLUICE_TOKEN', async (t) => {
  const { execFile } = await import('node:child_process')
  const { promisify } = await import('node:util')
  const { join } = await import('node:path')
  const { ROOT } = await import('../helpers/server.ts')
  const sluice = (args: string[], env: Record<string, string>) =>
    promisify(execFile)(
      process.execPath,
      ['--no-node-snapshot', '--conditions=sluice-source', join(ROOT, 'bin/sluice.js'), ...args],
      { env: { ...process.env, SLUICE_URL: server.url, SLUICE_SIGNING_KEY: '', ...env } },
    ).then(
      (r) => ({ code: 0, out: r.stdout }),
      (e) => ({ code: e.code as number, out: e.stdout as string }),
    )
  const asAdmin = { SLUICE_SIGNING_KEY: TEST_SIGNING_KEY }
  const created = JSON.parse((await sluice(['tokens', 'create', 'cli-viewer', '--role', 'viewer'], asAdmin)).out).data
  t.match(created.token, /^slt_/)
  t.equal((await sluice(['keys', 'list'], { SLUICE_TOKEN: created.token })).code, 0, 'a viewer lists keys')
  t.not(
    (await sluice(['keys', 'create', '--env', 'production'], { SLUICE_TOKEN: created.token })).code,
    0,
    'not create',
  )
  const listed = JSON.parse((await sluice(['tokens', 'list'], asAdmin)).out).data
  t.ok(listed.some((x: { name: string }) => x.name === 'cli-viewer'))
  t.equal((await sluice(['tokens', 'remove', created.id], asAdmin)).code, 0)
  t.not((await sluice(['keys', 'list'], { SLUICE_TOKEN: created.token })).code, 0, 'removed: refused')
})
