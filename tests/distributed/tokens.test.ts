// API tokens in distributed mode: a token created through one api process works through another, and
// once deleted through the first it is refused by the second (the control topic carries the deletion).
import t from 'tap'
import { eventually, getJson, postJson } from '../helpers/server.ts'
import { auth, distributedEnv, startNode, type Node } from './cluster.ts'

t.setTimeout(240_000)

t.test('a token deleted through one api process is refused by every other', async (t) => {
  const env = distributedEnv('tokens')
  const nodes: Node[] = []
  t.teardown(() => Promise.all(nodes.map((n) => n.kill('SIGKILL'))))
  const [a, b] = await Promise.all([startNode(['api'], env), startNode(['api'], env)])
  nodes.push(a, b)
  const created = await postJson(`${a.url}/v1/tokens`, { name: 'ci', role: 'editor' }, auth)
  t.equal(created.status, 201)
  const bearer = { authorization: `Bearer ${created.body.data.token}` }
  await eventually(
    async () => ((await getJson(`${b.url}/v1/webhooks`, bearer)).status === 200 ? true : undefined),
    30_000,
  )
  t.pass('the other api process takes it')
  const removed = await fetch(`${a.url}/v1/tokens/${created.body.data.id}`, { method: 'DELETE', headers: auth })
  t.equal(removed.status, 200)
  t.equal((await getJson(`${a.url}/v1/webhooks`, bearer)).status, 401, 'refused where it was deleted, at once')
  await eventually(
    async () => ((await getJson(`${b.url}/v1/webhooks`, bearer)).status === 401 ? true : undefined),
    30_000,
    20,
  )
  t.pass('and by the other')
})

t.test('users, sessions and the audit log hold across api processes (control topic, ClickHouse)', async (t) => {
  const env = distributedEnv('users')
  const nodes: Node[] = []
  t.teardown(() => Promise.all(nodes.map((n) => n.kill('SIGKILL'))))
  const [a, b] = await Promise.all([startNode(['api'], env), startNode(['api'], env)])
  nodes.push(a, b)
  const password = 'a long enough password'
  const added = await postJson(`${a.url}/v1/users`, { email: 'ops@example.com', password, role: 'admin' }, auth)
  t.equal(added.status, 201)
  // Signed in through b once the user reached it; the session then works through a.
  const login = await eventually(async () => {
    const res = await postJson(`${b.url}/v1/auth/login`, { email: 'ops@example.com', password })
    return res.status === 200 ? res : undefined
  }, 30_000)
  const session = /sluice_session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1]
  const cookie = { cookie: `sluice_session=${session}` }
  const me = await eventually(async () => {
    const res = await getJson(`${a.url}/v1/auth/me`, cookie)
    return res.status === 200 ? res : undefined
  }, 30_000)
  t.equal(me.body.data.name, 'ops@example.com', 'the session of b is known to a')
  const entries = (await getJson(`${a.url}/v1/audit`, cookie)).body.data
  t.ok(
    entries.some((e: any) => e.action === 'users:admin' && e.route === '/v1/users'),
    'the user added through a is in the log',
  )
  t.ok(
    entries.some((e: any) => e.action === 'auth:login' && e.actor.name === 'ops@example.com'),
    'the sign-in through b too, read through a',
  )
  const out = await fetch(`${b.url}/v1/auth/logout`, {
    method: 'POST',
    headers: { ...cookie, 'x-csrf-token': login.body.data.csrf_token },
  })
  t.equal(out.status, 200)
  await eventually(
    async () => ((await getJson(`${a.url}/v1/auth/me`, cookie)).status === 401 ? true : undefined),
    30_000,
    20,
  )
  t.pass('signed out through b: refused by a')
})
