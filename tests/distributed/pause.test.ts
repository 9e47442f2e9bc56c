// Pausing a webhook on real Kafka and ClickHouse (issue 34, item 3): the transformer holds the paused
// webhook's requests in the ClickHouse request store while another webhook on the same partition
// flows; the transformer is killed (-9) and replaced; the replacement still holds, and resume (an
// api node's marker down `raw`) releases them in order, before a request sent after the resume.
import t from 'tap'
import { eventually, postJson } from '../helpers/server.ts'
import { auth, distributedEnv, startNode, webhookCluster } from './cluster.ts'

t.setTimeout(300_000)
const env = { ...distributedEnv('pause'), SLUICE_PARTITIONS: '1' }
const { nodes, api, started, rest, createWebhook, send } = await webhookCluster(t, env, [
  ['ingest'],
  ['transformer', 'dedup'],
  ['sink'],
])
const firstTransformer = started[1]
const outcome = (hookId: string, requestId: string, status?: string) =>
  eventually(
    async () => {
      const r = await rest(`/v1/webhooks/${hookId}/requests/${requestId}`)
      return r.status === 200 && (status === undefined || r.body.data.status === status) ? r.body.data : undefined
    },
    120_000,
    250,
  )
const heldCount = (hookId: string, count: number) =>
  eventually(
    async () => {
      const r = await rest(`/v1/webhooks/${hookId}`)
      return r.body.data.held === count ? r.body.data : undefined
    },
    60_000,
    250,
  )
const transform = 'function transform(evt) { return { name: "shop/order", data: evt } }'

t.test('held across a transformer replaced after kill -9; resume releases in order; others flow', async (t) => {
  const hook = await createWebhook({ name: 'Shop', transform })
  const other = await createWebhook({ name: 'Other', transform })
  t.equal((await postJson(`${api.url}/v1/webhooks/${hook.id}/pause`, {}, auth)).body.data.paused, true)

  // The transformer learns of the pause from the control topic: probe until a request is held.
  const ids: string[] = []
  await eventually(
    async () => {
      const id = await send(hook.id, { n: -1 })
      return (await outcome(hook.id, id)).status === 'held' ? ids.push(id) : undefined
    },
    60_000,
    500,
  )
  for (let n = 1; n < 4; n++) ids.push(await send(hook.id, { n }))
  const flowing = await send(other.id, { n: 0 })
  t.equal((await outcome(other.id, flowing)).status, 'delivered', 'the other webhook on the partition flows')
  for (const id of ids) t.equal((await outcome(hook.id, id)).status, 'held')
  await heldCount(hook.id, 4)

  await firstTransformer.kill('SIGKILL')
  const replacement = await startNode(['transformer', 'dedup'], env, [], 'start', { startTimeoutMs: 120_000 })
  nodes.push(replacement)
  ids.push(await send(hook.id, { n: 4 }))
  t.equal((await outcome(hook.id, ids[4])).status, 'held', 'the replacement holds too')
  const state = await heldCount(hook.id, 5)
  t.equal(state.paused, true)

  const resumed = await postJson(`${api.url}/v1/webhooks/${hook.id}/resume`, {}, auth)
  t.equal(resumed.status, 200)
  t.equal(resumed.body.data.paused, false)
  const after = await send(hook.id, { n: 5 })
  const results = await Promise.all([...ids, after].map((id) => outcome(hook.id, id, 'delivered')))
  const last = results[5]
  t.ok(
    results.slice(0, 5).every((r) => r.processed_at <= last.processed_at),
    'every held request is delivered before the one sent after the resume',
  )
  t.ok(
    results.every((r, i) => i === 0 || results[i - 1].processed_at <= r.processed_at),
    'in the order they arrived',
  )
  t.same(
    results.map((r) => r.attempt),
    [1, 1, 1, 1, 1, 1],
  )
  await heldCount(hook.id, 0)
})
