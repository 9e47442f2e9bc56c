// Failures lose nothing: a transform that throws, loops, returns an invalid event or a denied
// name puts the request on the dead-letter list (status failed) with its raw request and the
// error; after a fix it replays one by one or in bulk.
import t from 'tap'
import { getJson, postJson, startServer } from '../helpers/server.ts'
import { partitionOf } from '../../bus/partition.ts'
import { createWebhook, deliver, outcome, patchWebhook, storedEvents } from './helpers.ts'

// Short limits, so the looping transform is cut off quickly.
const PARTITIONS = 4
const server = await startServer({
  flags: { transformCpuTimeMs: '100', transformWallTimeMs: '300', partitions: String(PARTITIONS) },
})
t.teardown(() => server.stop())

const brokenClerk = `function transform(evt) {
  return { name: 'clerk/' + evt.type, data: evt.data.user.profile }   // payload has no data.user
}`
const fixedClerk = `function transform(evt) {
  return { name: 'clerk/' + evt.type, data: evt.data }
}`

t.test(
  'a transform that throws dead-letters the request with the raw request and the error; after the fix it replays',
  async (t) => {
    const hook = await createWebhook(server.url, { name: 'Clerk', transform: brokenClerk })
    const body = JSON.stringify({ type: 'user.deleted', data: { id: 'user_1', deleted: true } })
    const sent = await deliver(hook.url, body)
    t.equal(sent.status, 200, 'the sender is never told about the broken transform')
    const failed = await outcome(server.url, hook.id, sent.body.request_id)
    t.equal(failed.status, 'failed')
    t.equal(failed.error.code, 'TRANSFORM_THREW')
    t.match(failed.error.message, /profile|undefined/)
    t.equal(failed.request.body, body, 'the raw request is kept for replay')
    t.same(failed.event_ids, [])
    const listed = await getJson(`${server.url}/v1/webhooks/${hook.id}/requests?status=failed`)
    t.same(
      listed.body.data.map((r: any) => r.request_id),
      [sent.body.request_id],
    )

    await patchWebhook(server.url, hook.id, { transform: fixedClerk })
    const replay = await postJson(`${server.url}/v1/webhooks/${hook.id}/requests/${sent.body.request_id}/replay`, {})
    t.equal(replay.status, 202)
    t.same(replay.body.data, { request_id: sent.body.request_id, attempt: 2 })
    const delivered = await outcome(server.url, hook.id, sent.body.request_id, 2)
    t.equal(delivered.status, 'delivered')
    t.equal(delivered.error, null)
    const [event] = await storedEvents(server.url, delivered.event_ids)
    t.same([event.name, event.data], ['clerk/user.deleted', { id: 'user_1', deleted: true }])
    t.same(event.source.request_id, sent.body.request_id, 'the event traces back to the original request')
    t.same(
      (await getJson(`${server.url}/v1/webhooks/${hook.id}/requests?status=failed`)).body.data,
      [],
      'off the dead-letter list',
    )
  },
)

t.test('bulk replay re-runs every failed request of the webhook', async (t) => {
  const hook = await createWebhook(server.url, { name: 'Clerk bulk', transform: brokenClerk })
  const ids: string[] = []
  for (let i = 0; i < 3; i++)
    ids.push((await deliver(hook.url, { type: 'user.created', data: { id: `user_${i}` } })).body.request_id)
  for (const id of ids) t.equal((await outcome(server.url, hook.id, id)).status, 'failed')
  await patchWebhook(server.url, hook.id, { transform: fixedClerk })
  const bulk = await postJson(`${server.url}/v1/webhooks/${hook.id}/requests/replay`, { status: 'failed' })
  t.equal(bulk.status, 202)
  t.same(bulk.body.data, { status: 'failed', replayed: 3 })
  const results = await Promise.all(ids.map((id) => outcome(server.url, hook.id, id, 2)))
  t.same(
    results.map((r) => r.status),
    ['delivered', 'delivered', 'delivered'],
  )
  const events = await storedEvents(
    server.url,
    results.flatMap((r) => r.event_ids),
  )
  t.same(events.map((e) => e.data.id).sort(), ['user_0', 'user_1', 'user_2'])
})

t.test('an output that is not a valid event is dead-lettered with the field named', async (t) => {
  const hook = await createWebhook(server.url, {
    name: 'Invalid',
    transform: 'function transform(evt) { return { name: "app/x", data: "not an object" } }',
  })
  const sent = await deliver(hook.url, { a: 1 })
  const failed = await outcome(server.url, hook.id, sent.body.request_id)
  t.same(failed.error, { code: 'TRANSFORM_INVALID_EVENT', message: 'event.data: must be a JSON object' })
  const reserved = await createWebhook(server.url, {
    name: 'Reserved',
    transform: 'function transform(evt) { return [{ name: "ok/a", data: {} }, { name: "sluice/internal", data: {} }] }',
  })
  const sent2 = await deliver(reserved.url, {})
  t.match(
    (await outcome(server.url, reserved.id, sent2.body.request_id)).error.message,
    /^events\[1\]\.name: the prefix "sluice\/" is reserved/,
  )
})

t.test(
  'event-name lists with * wildcards: a denied name is dead-lettered, an allow list admits only its matches',
  async (t) => {
    const transform = 'function transform(evt) { return { name: evt.kind, data: {} } }'
    const hook = await createWebhook(server.url, {
      name: 'Lists',
      transform,
      allow_events: ['stripe/invoice.*', 'stripe/*.created'],
      deny_events: ['stripe/invoice.draft*'],
    })
    const cases: Array<[string, string]> = [
      ['stripe/invoice.paid', 'delivered'],
      ['stripe/customer.created', 'delivered'],
      ['stripe/invoice.drafted', 'failed'],
      ['stripe/charge.refunded', 'failed'],
    ]
    for (const [kind, status] of cases) {
      const sent = await deliver(hook.url, { kind })
      const result = await outcome(server.url, hook.id, sent.body.request_id)
      t.equal(result.status, status, kind)
      if (status === 'failed') t.equal(result.error.code, 'EVENT_NAME_DENIED')
    }
  },
)

t.test(
  'a transform stuck in a loop times out and is dead-lettered; neither senders nor other webhooks wait for it',
  async (t) => {
    const spinner = await createWebhook(server.url, {
      name: 'Spinner',
      transform: 'function transform(evt) { while (true) {} }',
    })
    // Another webhook on another partition of `raw` (partitions are consumed side by side).
    let other = await createWebhook(server.url, { name: 'Other' })
    while (partitionOf(other.id, PARTITIONS) === partitionOf(spinner.id, PARTITIONS))
      other = await createWebhook(server.url, { name: 'Other' })
    const started = Date.now()
    const sent = await Promise.all([1, 2, 3].map((n) => deliver(spinner.url, { n })))
    const answeredMs = Date.now() - started
    t.same(
      sent.map((s) => s.status),
      [200, 200, 200],
    )
    t.ok(answeredMs < 250, `answered in ${answeredMs} ms, not after the transforms`)
    const quick = await outcome(server.url, other.id, (await deliver(other.url, { ok: 1 })).body.request_id)
    t.equal(quick.status, 'delivered')
    const spun = await Promise.all(sent.map((s) => outcome(server.url, spinner.id, s.body.request_id)))
    t.same(
      spun.map((r) => r.error.code),
      ['TRANSFORM_TIMEOUT', 'TRANSFORM_TIMEOUT', 'TRANSFORM_TIMEOUT'],
    )
    t.ok(
      quick.processed_at < Math.max(...spun.map((r) => r.processed_at)),
      'the other webhook was served while the loops still ran',
    )
  },
)

t.test('replaying a request whose events were delivered records a duplicate instead of storing it twice', async (t) => {
  const hook = await createWebhook(server.url, { name: 'Twice' })
  const sent = await deliver(hook.url, { order: 1 })
  const first = await outcome(server.url, hook.id, sent.body.request_id)
  await postJson(`${server.url}/v1/webhooks/${hook.id}/requests/${sent.body.request_id}/replay`, {})
  const second = await outcome(server.url, hook.id, sent.body.request_id, 2)
  t.not(second.event_ids[0], first.event_ids[0], 'a new attempt, new internal IDs')
  const [original] = await storedEvents(server.url, first.event_ids)
  const [copy] = await storedEvents(server.url, second.event_ids)
  t.equal(copy.id, original.id, 'the same dedup key as the first attempt')
  t.same([copy.deduplicated, copy.duplicate_of], [true, original.internal_id])
  const live = await getJson(`${server.url}/v1/events?id=${original.id}`)
  t.same(
    live.body.data.map((e: any) => e.internal_id),
    [original.internal_id],
    'stored once as a live event',
  )
})

t.test('replay of an unknown request is 404', async (t) => {
  const hook = await createWebhook(server.url, { name: 'Nothing' })
  const missing = await postJson(`${server.url}/v1/webhooks/${hook.id}/requests/01J00000000000000000000000/replay`, {})
  t.same([missing.status, missing.body.code], [404, 'NOT_FOUND'])
  const badStatus = await getJson(`${server.url}/v1/webhooks/${hook.id}/requests?status=lost`)
  t.equal(badStatus.status, 400)
  t.match(badStatus.body.error, /^query\.status: must be one of delivered, failed, unrouted/)
})
