// Dedup by (env, id) over the window: across names, across restarts, recorded and explained.
import t from 'tap'
import { startServer, postJson, getJson, eventually } from '../helpers/server.ts'

const eventAt = async (base: string, id: string) =>
  eventually(async () => {
    const r = await getJson(`${base}/v1/events/${id}`)
    return r.status === 200 ? r.body.data : undefined
  })

t.test(
  'the first event with an id is kept; later ones, whatever their name or payload, are duplicates of it',
  async (t) => {
    const server = await startServer()
    t.teardown(() => server.stop())
    const first = await postJson(`${server.url}/e/k`, { name: 'order/created', data: { v: 1 }, id: 'order-1' })
    const second = await postJson(`${server.url}/e/k`, { name: 'order/other-name', data: { v: 2 }, id: 'order-1' })
    t.equal(second.status, 200, 'a duplicate is still acknowledged')
    t.not(second.body.ids[0], first.body.ids[0], 'with its own internal ID')
    const dup = await eventAt(server.url, second.body.ids[0])
    t.equal(dup.deduplicated, true)
    t.equal(dup.duplicate_of, first.body.ids[0], 'looking up the duplicate says which event it duplicated')
    const list = await getJson(`${server.url}/v1/events?id=order-1`)
    t.same(
      list.body.data.map((e: { internal_id: string }) => e.internal_id),
      [first.body.ids[0]],
      'one event with that id',
    )
    t.same(list.body.data[0].data, { v: 1 }, 'the first payload wins')
  },
)

t.test('the same id in another environment is a different event', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())
  await fetch(`${server.url}/v1/envs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'pr-7', branch: true }),
  })
  const a = await postJson(`${server.url}/e/k`, { name: 'x/y', data: {}, id: 'same' })
  const b = await postJson(`${server.url}/e/k`, { name: 'x/y', data: {}, id: 'same' }, { 'x-service-env': 'pr-7' })
  t.equal((await eventAt(server.url, a.body.ids[0])).deduplicated, undefined)
  t.equal((await eventAt(server.url, b.body.ids[0])).deduplicated, undefined)
})

t.test('duplicates within one batch: the first one wins', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())
  const r = await postJson(`${server.url}/e/k`, [
    { name: 'a', data: {}, id: 'b1' },
    { name: 'b', data: {}, id: 'b1' },
    { name: 'c', data: {}, id: 'b2' },
  ])
  const [one, two, three] = await Promise.all(r.body.ids.map((id: string) => eventAt(server.url, id)))
  t.equal(one.deduplicated, undefined)
  t.equal(two.duplicate_of, one.internal_id)
  t.equal(three.deduplicated, undefined)
})

t.test('dedup state survives a restart on the same data dir', async (t) => {
  const first = await startServer()
  const original = await postJson(`${first.url}/e/k`, { name: 'r/x', data: {}, id: 'restart-1' })
  await eventAt(first.url, original.body.ids[0])
  await first.stop()
  const second = await startServer({ dataDir: first.dataDir })
  t.teardown(() => second.stop())
  const repeat = await postJson(`${second.url}/e/k`, { name: 'r/x', data: {}, id: 'restart-1' })
  t.equal((await eventAt(second.url, repeat.body.ids[0])).duplicate_of, original.body.ids[0])
})

t.test('after the window, the same id is accepted again', async (t) => {
  const server = await startServer({ flags: { dedupWindowMs: '1000' } })
  t.teardown(() => server.stop())
  const a = await postJson(`${server.url}/e/k`, { name: 'w/x', data: {}, id: 'win-1' })
  await eventAt(server.url, a.body.ids[0])
  const within = await postJson(`${server.url}/e/k`, { name: 'w/x', data: {}, id: 'win-1' })
  t.equal((await eventAt(server.url, within.body.ids[0])).duplicate_of, a.body.ids[0])
  await new Promise((r) => setTimeout(r, 1100))
  const after = await postJson(`${server.url}/e/k`, { name: 'w/x', data: {}, id: 'win-1' })
  t.equal((await eventAt(server.url, after.body.ids[0])).deduplicated, undefined, 'accepted: the window is over')
})

t.test('a retried send with the same ID seed never duplicates events without an id', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())
  const headers = { 'x-service-event-id-seed': `${Date.now()},AAAAAAAAAAAAAA==` }
  const first = await postJson(`${server.url}/e/k`, { name: 'seed/x', data: {} }, headers)
  const retry = await postJson(`${server.url}/e/k`, { name: 'seed/x', data: {} }, headers)
  t.same(retry.body.ids, first.body.ids)
  await eventAt(server.url, first.body.ids[0])
  await postJson(`${server.url}/e/k`, { name: 'seed/sentinel', data: {} })
  await eventually(async () =>
    (await getJson(`${server.url}/v1/events?name=seed/sentinel`)).body.data.length ? true : undefined,
  )
  const all = await getJson(`${server.url}/v1/events?name=seed/x&include_duplicates=true`)
  t.equal(all.body.data.length, 1, 'stored exactly once')
})
