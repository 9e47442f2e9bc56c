// One hostile webhook must not starve the others (issue 9, defect 3). Here every webhook
// shares one partition of `raw`, the worst case: a transform that loops runs one request at a
// time until it has proven itself; over the shared lane's time budget its requests move to the
// slow lane, where it is paused after SLUICE_TRANSFORM_BREAKER_KILLS limit kills in a row; its
// requests are then recorded as TRANSFORM_PAUSED without taking isolate time; nothing is lost:
// after a fix they replay. A good webhook's request sent behind a hostile backlog is delivered,
// and the backlog ahead of it cost at most those few kills.
import t from 'tap'
import { getJson, postJson, startServer } from '../helpers/server.ts'
import { createWebhook, deliver, outcome, patchWebhook, storedEvents } from './helpers.ts'

const KILLS = 3
const server = await startServer({
  flags: {
    partitions: '1',
    transformCpuTimeMs: '100',
    transformBreakerKills: String(KILLS),
    transformBreakerPauseMs: '600000',
  },
})
t.teardown(() => server.stop())

const LOOP = 'function transform(evt) { while (true) {} }'
const GOOD = 'function transform(evt) { return { name: "good/" + evt.kind, id: evt.id, data: { n: evt.n } } }'

t.test(
  'a good webhook is served behind a hammered hostile one, which is paused after a few kills; nothing is lost',
  async (t) => {
    const hostile = await createWebhook(server.url, { name: 'Hostile', transform: LOOP })
    const good = await createWebhook(server.url, { name: 'Good', transform: GOOD })
    const backlog = await Promise.all(Array.from({ length: 60 }, (_, n) => deliver(hostile.url, { n })))
    t.same(
      backlog.filter((r) => r.status !== 200),
      [],
      'every hostile request is taken (the sender never waits for transforms)',
    )
    const sent = await deliver(good.url, { kind: 'order.paid', id: 'order-1', n: 1 })
    const delivered = await outcome(server.url, good.id, sent.body.request_id)
    t.equal(delivered.status, 'delivered')
    const ranBefore = (
      await getJson(`${server.url}/v1/webhooks/${hostile.id}/requests?status=failed&limit=100`)
    ).body.data.filter((r: any) => r.error.code === 'TRANSFORM_TIMEOUT').length
    t.ok(
      ranBefore <= KILLS,
      `the backlog ahead of the good request cost ${ranBefore} CPU-limit kills (at most ${KILLS}), not 60`,
    )
    const [event] = await storedEvents(server.url, delivered.event_ids)
    t.same([event.name, event.id, event.data], ['good/order.paid', 'order-1', { n: 1 }])

    const hostileOutcomes = await Promise.all(backlog.map((r) => outcome(server.url, hostile.id, r.body.request_id)))
    const count = (code: string) => hostileOutcomes.filter((r) => r.error.code === code).length
    t.same(
      { timeout: count('TRANSFORM_TIMEOUT'), paused: count('TRANSFORM_PAUSED') },
      { timeout: KILLS, paused: 60 - KILLS },
      'a few ran, one at a time, into the CPU limit; then the transform was paused and the rest never ran',
    )
    t.ok(
      hostileOutcomes.every((r) => r.status === 'failed'),
      'all of them are on the dead-letter list',
    )
    const pausedOne = hostileOutcomes.find((r) => r.error.code === 'TRANSFORM_PAUSED')
    t.match(pausedOne.error.message, /limit 3 times in a row, so it is paused until .* replay it then/)

    // More hammering while paused costs no isolate time: recorded as paused at once.
    const more = await Promise.all(Array.from({ length: 20 }, (_, n) => deliver(hostile.url, { n: 100 + n })))
    const paused = await Promise.all(more.map((r) => outcome(server.url, hostile.id, r.body.request_id)))
    t.same(
      paused.map((r) => r.error.code),
      Array(20).fill('TRANSFORM_PAUSED'),
    )
    const again = await deliver(good.url, { kind: 'order.paid', id: 'order-2', n: 2 })
    t.equal(
      (await outcome(server.url, good.id, again.body.request_id)).status,
      'delivered',
      'the good webhook is still served',
    )

    // The fix is a new transform version: it runs at once, and replay delivers every held request.
    t.equal(
      (
        await patchWebhook(server.url, hostile.id, {
          transform: 'function transform(evt) { return { name: "fixed/x", data: evt } }',
        })
      ).status,
      200,
    )
    const replay = await postJson(`${server.url}/v1/webhooks/${hostile.id}/requests/replay`, { status: 'failed' })
    t.same(replay.body.data, { status: 'failed', replayed: 80 })
    const replayed = await Promise.all(
      [...backlog, ...more].map((r) => outcome(server.url, hostile.id, r.body.request_id, 2)),
    )
    t.same(
      replayed.filter((r) => r.status !== 'delivered'),
      [],
      'every held request is delivered after the fix: nothing lost',
    )
    const events = await storedEvents(
      server.url,
      replayed.flatMap((r) => r.event_ids),
    )
    t.same(
      events.map((e) => e.data.n).sort((a, b) => a - b),
      [...Array(60).keys(), ...Array.from({ length: 20 }, (_, n) => 100 + n)],
    )
  },
)

t.test('a transform that fails fast (throws) is not paused: only limit kills count', async (t) => {
  const thrower = await createWebhook(server.url, {
    name: 'Thrower',
    transform: 'function transform(evt) { throw new Error("bad " + evt.n) }',
  })
  const sent = await Promise.all(Array.from({ length: KILLS * 3 }, (_, n) => deliver(thrower.url, { n })))
  const results = await Promise.all(sent.map((r) => outcome(server.url, thrower.id, r.body.request_id)))
  t.same(
    results.map((r) => r.error.code),
    Array(KILLS * 3).fill('TRANSFORM_THREW'),
  )
})
