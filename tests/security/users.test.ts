// People on the REST API (issue 51, item 1): users with a password (argon2id), sessions in an HttpOnly
// SameSite cookie (Secure behind TLS), CSRF on every change made with the cookie, 401 LOGIN_FAILED and
// then 429 LOGIN_THROTTLED, roles and environments as tokens have them, sign-out and removal ending a
// session at once, sign-ins audited, and never a password in an answer, an entry or a log line.
import t from 'tap'
import { Writable } from 'node:stream'
import { loadConfig } from '../../config/config.ts'
import { startEmbedded } from '../../server/embedded.ts'
import { createLogger } from '../../server/log.ts'
import { eventually, startServer, tempDir, TEST_SIGNING_KEY } from '../helpers/server.ts'

const server = await startServer({ mode: 'start', flags: { trustProxy: '127.0.0.1' } })
t.teardown(() => server.stop())

type Answer = { status: number; body: any; headers: Headers }
async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: await res.json().catch(() => null), headers: res.headers }
}
const admin = (method: string, path: string, body?: unknown) =>
  call(method, path, body, { authorization: `Bearer ${TEST_SIGNING_KEY}` })
const PASSWORD = 'correct horse battery staple'

async function signIn(email: string, password = PASSWORD, headers: Record<string, string> = {}) {
  const answer = await call('POST', '/v1/auth/login', { email, password }, headers)
  const cookie = answer.headers.get('set-cookie') ?? ''
  const session = /sluice_session=([^;]+)/.exec(cookie)?.[1]
  return { answer, cookie, session, csrf: answer.body?.data?.csrf_token as string | undefined }
}
const withSession = (s: { session?: string; csrf?: string }, csrf = true) => ({
  cookie: `sluice_session=${s.session}`,
  ...(csrf && s.csrf && { 'x-csrf-token': s.csrf }),
})

await admin('POST', '/v1/envs', { name: 'staging' })

t.test('an admin adds users; bad input is named and changes nothing; no password is ever shown', async (t) => {
  for (const [body, field] of [
    [{ email: 'ana@example.com', password: 'short', role: 'editor' }, /body\.password/],
    [{ email: 'not-an-email', password: PASSWORD, role: 'editor' }, /email/],
    [{ email: 'ana@example.com', password: PASSWORD, role: 'owner' }, /body\.role/],
    [{ email: 'ana@example.com', password: PASSWORD, role: 'editor', envs: ['nowhere'] }, /envs\[0\]/],
  ] as const) {
    const refused = await admin('POST', '/v1/users', body)
    t.ok(refused.status === 400 || refused.status === 404, JSON.stringify(body))
    t.match(refused.body.error, field)
  }
  t.same((await admin('GET', '/v1/users')).body.data, [], 'nothing was added')
  const added = await admin('POST', '/v1/users', { email: 'Ana@Example.com', password: PASSWORD, role: 'editor' })
  t.equal(added.status, 201)
  t.match(added.body.data, { email: 'ana@example.com', role: 'editor', sign_in: 'password', envs: null })
  t.equal(
    (await admin('POST', '/v1/users', { email: 'ana@example.com', password: PASSWORD, role: 'viewer' })).status,
    409,
  )
  const listed = JSON.stringify((await admin('GET', '/v1/users')).body)
  t.notOk(listed.includes(PASSWORD) || /argon2|password_hash|passwordHash/.test(listed), 'no password, no hash')
})

t.test('a session cookie: HttpOnly, SameSite=Strict, Secure only over TLS; CSRF on changes', async (t) => {
  const plain = await signIn('ana@example.com')
  t.equal(plain.answer.status, 200)
  t.match(plain.cookie, /HttpOnly/)
  t.match(plain.cookie, /SameSite=Strict/)
  t.notMatch(plain.cookie, /Secure/, 'not over plain HTTP')
  t.match(plain.session, /^sls_/)
  const tls = await signIn('ana@example.com', PASSWORD, { 'x-forwarded-proto': 'https' })
  t.match(tls.cookie, /Secure/, 'Secure behind a TLS-terminating proxy')

  const me = await call('GET', '/v1/auth/me', undefined, withSession(plain, false))
  t.match(me.body.data, { kind: 'user', name: 'ana@example.com', role: 'editor', csrf_token: plain.csrf })
  const forged = await call('POST', '/v1/webhooks', { name: 'forged' }, withSession(plain, false))
  t.equal(forged.status, 403)
  t.equal(forged.body.code, 'CSRF_TOKEN_INVALID')
  const wrong = await call('POST', '/v1/webhooks', { name: 'forged' }, { ...withSession(plain), 'x-csrf-token': 'x' })
  t.equal(wrong.body.code, 'CSRF_TOKEN_INVALID', 'another token is refused too')
  t.same((await admin('GET', '/v1/webhooks')).body.data, [], 'and nothing changed')
  t.equal((await call('POST', '/v1/webhooks', { name: 'orders' }, withSession(plain))).status, 201, 'with it: done')
  const asEditor = await call('POST', '/v1/tokens', { name: 'x', role: 'admin' }, withSession(plain))
  t.equal(asEditor.status, 403)
  t.match(asEditor.body.error, /tokens:admin: needs the role admin; this user's role is editor/)

  t.equal((await call('POST', '/v1/auth/logout', undefined, withSession(tls))).status, 200)
  t.equal((await call('GET', '/v1/auth/me', undefined, withSession(tls))).status, 401, 'signed out: refused at once')
  t.equal((await call('GET', '/v1/auth/me', undefined, withSession(plain))).status, 200, 'the other session stays')
})

t.test('a user narrowed to environments acts only there; removing a user ends their sessions', async (t) => {
  const added = await admin('POST', '/v1/users', {
    email: 'sam@example.com',
    password: PASSWORD,
    role: 'viewer',
    envs: ['staging'],
  })
  const sam = await signIn('sam@example.com')
  t.equal((await call('GET', '/v1/runs?env=staging', undefined, withSession(sam))).status, 200)
  const other = await call('GET', '/v1/runs?env=production', undefined, withSession(sam))
  t.equal(other.status, 403)
  t.match(other.body.error, /this user acts in staging only/)
  t.equal((await admin('DELETE', `/v1/users/${added.body.data.id}`)).status, 200)
  t.equal((await call('GET', '/v1/runs?env=staging', undefined, withSession(sam))).status, 401, 'removed: refused')
  t.equal((await signIn('sam@example.com')).answer.status, 401, 'and cannot sign in')
})

t.test('wrong passwords: 401 LOGIN_FAILED, then 429 LOGIN_THROTTLED even with the right one', async (t) => {
  await admin('POST', '/v1/users', { email: 'lee@example.com', password: PASSWORD, role: 'viewer' })
  const unknown = await signIn('nobody@example.com')
  t.equal(unknown.answer.status, 401)
  t.equal(unknown.answer.body.code, 'LOGIN_FAILED', 'an unknown email looks like a wrong password')
  for (let i = 0; i < 5; i++) {
    const failed = await signIn('lee@example.com', 'not the password at all')
    t.equal(failed.answer.body.code, 'LOGIN_FAILED')
    t.notOk(failed.cookie, 'no cookie')
  }
  const throttled = await signIn('lee@example.com')
  t.equal(throttled.answer.status, 429)
  t.equal(throttled.answer.body.code, 'LOGIN_THROTTLED')
  t.ok(Number(throttled.answer.headers.get('retry-after')) > 0, 'Retry-After')
  t.equal((await signIn('ana@example.com')).answer.status, 200, 'another account still signs in')
})

t.test('sign-ins are audited, with no password and no session in an entry', async (t) => {
  const entries = await eventually(async () => {
    const { body } = await admin('GET', '/v1/audit?action=auth:login')
    return body.data.length >= 3 ? body.data : undefined
  })
  t.ok(
    entries.some((e: any) => e.actor.kind === 'user' && e.actor.name === 'ana@example.com' && e.status === 200),
    'a sign-in',
  )
  t.ok(
    entries.some((e: any) => e.actor.name === 'lee@example.com' && e.status === 401),
    'a failed one',
  )
  const text = JSON.stringify((await admin('GET', '/v1/audit?limit=1000')).body)
  t.notOk(text.includes(PASSWORD) || text.includes('sls_'), 'no password, no session ID')
})

t.test('no password or session ID in a log line, at trace level', async (t) => {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk))
      done()
    },
  })
  const config = loadConfig(
    'start',
    {
      port: '0',
      host: '127.0.0.1',
      dataDir: await tempDir(),
      signingKey: TEST_SIGNING_KEY,
      opsPort: '0',
      logLevel: 'trace',
    },
    {},
  )
  const traced = await startEmbedded(config, createLogger('trace', sink))
  t.teardown(() => traced.stop())
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${traced.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
  await post(
    '/v1/users',
    { email: 'kim@example.com', password: PASSWORD, role: 'viewer' },
    { authorization: `Bearer ${TEST_SIGNING_KEY}` },
  )
  const res = await post('/v1/auth/login', { email: 'kim@example.com', password: PASSWORD })
  const session = /sluice_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]
  await fetch(`${traced.url}/v1/auth/me`, { headers: { cookie: `sluice_session=${session}` } })
  await post('/v1/auth/login', { email: 'kim@example.com', password: 'a wrong password here' })
  t.ok(lines.length > 0, 'it logged')
  const all = lines.join('')
  t.notOk(all.includes(PASSWORD), 'no password')
  t.notOk(all.includes(session), 'no session ID')
})
