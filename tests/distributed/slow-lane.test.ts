// The fair share on real Kafka and ClickHouse (issue 9, defect 3): a looping webhook's requests
// leave the shared lane over its time budget, go through the slow-lane topic to the slow lane's
// own consumer group, and are paused there after a few kills, while a good webhook on the same
// partition is delivered; after a fix every held request replays. Nothing is lost.
// On the default Kafka client (@platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t from 'tap'
import { eventually, postJson } from '../helpers/server.ts'
import { auth, distributedEnv, webhookCluster } from './cluster.ts'

t.setTimeout(240_000)
const KILLS = 3
const env = { ...distributedEnv('slowlane'), SLUICE_PARTITIONS: '1', SLUICE_TRANSFORM_BREAKER_KILLS: String(KILLS) }
const { api, rest, createWebhook, send } = await webhookCluster(
  t,
  env,
  [['ingest'], ['transformer', 'dedup'], ['sink']],
  'SIGTERM',
)
const outcome = (hookId: string, requestId: string, attempt = 1) =>
  eventually(
    async () => {
      const r = await rest(`/v1/webhooks/${hookId}/requests/${requestId}`)
      return r.status === 200 && r.body.data.attempt >= attempt ? r.body.data : undefined
    },
    90_000,
    250,
  )

t.test(
  'a hostile webhook is moved to the slow lane and paused; a good one on its partition is delivered; replay after a fix',
  async (t) => {
    const hostile = await createWebhook({ name: 'Hostile', transform: 'function transform() { while (true) {} }' })
    const good = await createWebhook({
      name: 'Good',
      transform: 'function transform(evt) { return { name: "good/" + evt.kind, data: evt } }',
    })
    const held: string[] = []
    for (let n = 0; n < 10; n++) held.push(await send(hostile.id, { n }))
    const sent = await send(good.id, { kind: 'paid', n: 1 })
    t.equal((await outcome(good.id, sent)).status, 'delivered')

    const results = await Promise.all(held.map((id) => outcome(hostile.id, id)))
    const codes = results.map((r) => r.error?.code)
    const count = (code: string) => codes.filter((c) => c === code).length
    t.same(
      { timeout: count('TRANSFORM_TIMEOUT'), paused: count('TRANSFORM_PAUSED') },
      { timeout: KILLS, paused: 10 - KILLS },
      "the kills were the slow lane's (the shared lane gives up before the CPU limit and records nothing), then it paused",
    )

    await fetch(`${api.url}/v1/webhooks/${hostile.id}`, {
      method: 'PATCH',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ transform: 'function transform(evt) { return { name: "fixed/x", data: evt } }' }),
    })
    // The transformer node applies the new version from the control topic: replay once it has.
    const replayed = await eventually(
      async () => {
        await postJson(`${api.url}/v1/webhooks/${hostile.id}/requests/replay`, { status: 'failed' }, auth)
        const attempts = await Promise.all(held.map((id) => rest(`/v1/webhooks/${hostile.id}/requests/${id}`)))
        return attempts.every((r) => r.body.data?.status === 'delivered') ? attempts.map((r) => r.body.data) : undefined
      },
      120_000,
      3000,
    )
    t.equal(replayed.length, 10, 'every held request is delivered after the fix')
  },
)
