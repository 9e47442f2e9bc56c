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
