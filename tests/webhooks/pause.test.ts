// Pausing a webhook (issue 34, item 3): its requests are still answered 200 and captured, but held
// (status `held`, counted in the webhook's JSON) while another webhook on the same partition keeps
// flowing; resume delivers them before anything that arrived after it, in order; the hold survives
// kill -9 of the embedded server.
import t from 'tap'
import { join } from 'node:path'
import { eventually, getJson, postJson, removeDir, spawnServer, startServer, tempDir } from '../helpers/server.ts'
import { createWebhook, deliver, outcome, storedEvents } from './helpers.ts'

const transform = 'function transform(evt) { return { name: "shop/" + evt.kind, data: evt } }'

const held = (url: string, hookId: string, count: number) =>
  eventually(async () => {
    const r = await getJson(`${url}/v1/webhooks/${hookId}`)
    return r.body.data.held === count ? r.body.data : undefined
  }, 20_000)

/** Outcomes of the requests once all are delivered (attempt 1: a release is not a replay). */
const delivered = (url: string, hookId: string, ids: string[]) =>
  Promise.all(
    ids.map((id) =>
      eventually(async () => {
        const r = await getJson(`${url}/v1/webhooks/${hookId}/requests/${id}`)
        return r.body.data?.status === 'delivered' ? r.body.data : undefined
      }, 30_000),
    ),
  )

t.test('embedded server', async (t) => {
  // One partition: the paused webhook and the running one share it.
  const server = await startServer({ flags: { partitions: '1' } })
  t.teardown(() => server.stop())

  t.test(
    'a paused webhook holds its requests while another on its partition flows; resume delivers in order',
    async (t) => {
      const hook = await createWebhook(server.url, { name: 'Shop', transform })
      const other = await createWebhook(server.url, { name: 'Other', transform })
      const paused = await postJson(`${server.url}/v1/webhooks/${hook.id}/pause`, {})
      t.equal(paused.status, 200)
      t.match(paused.body.data, { paused: true, held: 0 })
      t.type(paused.body.data.paused_at, 'string')

      const ids: string[] = []
      for (let n = 0; n < 5; n++) {
        const sent = await deliver(hook.url, { kind: 'order', n })
        t.equal(sent.status, 200, 'the sender is answered as usual')
        ids.push(sent.body.request_id)
      }
      const flowing = await deliver(other.url, { kind: 'other', n: 0 })
      t.equal(
        (await outcome(server.url, other.id, flowing.body.request_id)).status,
        'delivered',
        'the other webhook flows',
      )

      const state = await held(server.url, hook.id, 5)
      t.equal(state.paused, true)
      const listed = await getJson(`${server.url}/v1/webhooks/${hook.id}/requests?status=held`)
      t.same(
        listed.body.data.map((r: any) => r.request_id),
        [...ids].reverse(),
        'each request is held with its raw request, newest first like every list',
      )
      t.same(listed.body.data[0].event_ids, [], 'nothing transformed or delivered')
      t.equal(listed.body.data[0].request.body, JSON.stringify({ kind: 'order', n: 4 }))

      const resumed = await postJson(`${server.url}/v1/webhooks/${hook.id}/resume`, {})
      t.equal(resumed.status, 200)
      t.equal(resumed.body.data.paused, false)
      t.equal(resumed.body.data.paused_at, null)
      const after = await deliver(hook.url, { kind: 'order', n: 5 })
      const results = await delivered(server.url, hook.id, [...ids, after.body.request_id])
      const heldResults = results.slice(0, 5)
      const last = results[5]
      t.ok(
        heldResults.every((r) => r.processed_at <= last.processed_at),
        'every held request is delivered before the one that arrived after the resume',
      )
      t.ok(
        heldResults.every((r, i) => i === 0 || heldResults[i - 1].processed_at <= r.processed_at),
        'the held requests are released oldest first',
      )
      t.same(
        results.map((r) => r.attempt),
        [1, 1, 1, 1, 1, 1],
        'a release is the first delivery, not a replay',
      )
      const events = await storedEvents(
        server.url,
        results.flatMap((r) => r.event_ids),
      )
      t.same(
        events.map((e) => e.data.n),
        [0, 1, 2, 3, 4, 5],
      )
      t.equal((await held(server.url, hook.id, 0)).paused, false)

      const again = await postJson(`${server.url}/v1/webhooks/${hook.id}/resume`, {})
      t.equal(again.status, 409)
      t.equal(again.body.code, 'WEBHOOK_NOT_PAUSED')
    },
  )

  t.test('pause of an unknown webhook is 404; pausing twice changes nothing', async (t) => {
    const missing = await postJson(`${server.url}/v1/webhooks/wh_missing/pause`, {})
    t.equal(missing.status, 404)
    const hook = await createWebhook(server.url, { name: 'Twice' })
    const first = await postJson(`${server.url}/v1/webhooks/${hook.id}/pause`, {})
    const second = await postJson(`${server.url}/v1/webhooks/${hook.id}/pause`, {})
    t.equal(second.body.data.paused_at, first.body.data.paused_at)
  })
})

t.test('held requests survive kill -9; after the restart resume delivers them in order', async (t) => {
  const dataDir = await tempDir()
  const args = ['dev', '--port', '0', '--data-dir', join(dataDir, 'sluice')]
  const first = await spawnServer(args)
  t.teardown(() => {
    first.child.kill('SIGKILL')
  })
  const hook = await createWebhook(first.url, { name: 'Crash', transform })
  await postJson(`${first.url}/v1/webhooks/${hook.id}/pause`, {})
  const ids: string[] = []
  for (let n = 0; n < 4; n++) ids.push((await deliver(hook.url, { kind: 'order', n })).body.request_id)
  await held(first.url, hook.id, 4)
  first.child.kill('SIGKILL')
  t.equal(await first.stopped, null, 'killed, not exited')

  const second = await spawnServer(args)
  t.teardown(async () => {
    second.child.kill('SIGTERM')
    await second.stopped
    await removeDir(dataDir)
  })
  const state = await held(second.url, hook.id, 4)
  t.equal(state.paused, true, 'still paused after the restart')
  ids.push((await deliver(hook.url.replace(first.url, second.url), { kind: 'order', n: 4 })).body.request_id)
  await held(second.url, hook.id, 5)
  t.equal((await postJson(`${second.url}/v1/webhooks/${hook.id}/resume`, {})).status, 200)
  const results = await delivered(second.url, hook.id, ids)
  const events = await storedEvents(
    second.url,
    results.flatMap((r) => r.event_ids),
  )
  t.same(
    events.map((e) => e.data.n),
    [0, 1, 2, 3, 4],
  )
})
