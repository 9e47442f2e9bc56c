// Retention per environment and erasure in distributed mode, through the REST API of a node on the
// test Kafka and each supported ClickHouse (18.16 and a current release): an erasure job ends
// `done` once ClickHouse's mutations are, and an environment's retention applies at the sink's
// next pass (one runs at start), leaving the other environments' events.
import t from 'tap'
import { newIdSeed } from '../../core/ids.ts'
import { clickHouseServers } from '../infra/services.ts'
import { eventually, getJson, postJson, tempDir } from '../helpers/server.ts'
import { auth, distributedEnv, startNode } from './cluster.ts'

const DAY = 24 * 60 * 60_000
const ROLES = ['api', 'ingest', 'dedup', 'sink']

for (const { server, url } of clickHouseServers()) {
  t.test(`ClickHouse ${server}: erasure and retention per environment through the REST API`, async (t) => {
    const env = { ...distributedEnv(`privacy_${server}`), SLUICE_CLICKHOUSE_URL: url }
    const dataDir = await tempDir('sluice-node-')
    let node = await startNode(ROLES, env, [], 'start', { dataDir, startTimeoutMs: 120_000 })
    t.teardown(() => node.kill('SIGKILL'))
    const rest = async (method: string, path: string, body?: unknown) => {
      const headers = { ...auth, ...(body !== undefined && { 'content-type': 'application/json' }) }
      const response = await fetch(node.url + path, { method, headers, body: JSON.stringify(body) })
      return { status: response.status, body: await response.json() }
    }
    t.equal((await rest('POST', '/v1/envs', { name: 'short' })).status, 201)
    const patched = await rest('PATCH', '/v1/envs/short', { retention_days: { events: 1, runs: 1 } })
    t.same(patched.body.data.retention_days, { events: 1, runs: 1, requests: null })
    const keys = {
      short: (await rest('POST', '/v1/keys', { env: 'short' })).body.data.key,
      production: (await rest('POST', '/v1/keys', { env: 'production' })).body.data.key,
    }
    const send = (key: string, data: Record<string, unknown>, daysAgo = 0) =>
      eventually(async () => {
        const headers: Record<string, string> =
          daysAgo === 0 ? {} : { 'x-service-event-id-seed': newIdSeed(Date.now() - daysAgo * DAY) }
        const r = await postJson(`${node.url}/e/${key}`, { name: 'privacy/test', data }, headers)
        return r.status === 200 ? (r.body.ids[0] as string) : undefined
      }, 60_000)
    const ids = {
      shortOld: await send(keys.short, {}, 2),
      shortNew: await send(keys.short, {}),
      prodOld: await send(keys.production, {}, 2),
      u1: [await send(keys.production, { user: { id: 'u-1' } }), await send(keys.production, { user: { id: 'u-1' } })],
      u2: await send(keys.production, { user: { id: 'u-2' } }),
    }
    const status = async (id: string) => (await getJson(`${node.url}/v1/events/${id}`, auth)).status
    for (const id of [ids.shortOld, ids.shortNew, ids.prodOld, ...ids.u1, ids.u2])
      await eventually(async () => ((await status(id)) === 200 ? true : undefined), 60_000)

    const bad = await rest('POST', '/v1/erasures', { env: 'production', path: 'data.user.id' })
    t.same([bad.status, bad.body.error], [400, 'body.value: required'])
    const started = await rest('POST', '/v1/erasures', { env: 'production', path: 'data.user.id', value: 'u-1' })
    t.equal(started.status, 202)
    const done = await eventually(async () => {
      const job = (await rest('GET', `/v1/erasures/${started.body.data.id}`)).body.data
      return job.status === 'done' ? job : undefined
    }, 60_000)
    t.same(done.counts, { events: 2, runs: 0, requests: 0 })
    for (const id of ids.u1) t.equal(await status(id), 404, 'the erased events are gone once the job is done')
    t.equal(await status(ids.u2), 200, "another person's event stays")

    // The sink's first pass runs at start.
    await node.kill('SIGTERM')
    node = await startNode(ROLES, env, [], 'start', { dataDir, startTimeoutMs: 120_000 })
    await eventually(async () => ((await status(ids.shortOld)) === 404 ? true : undefined), 60_000)
    t.equal(await status(ids.shortNew), 200, "short's fresh event stays")
    t.equal(await status(ids.prodOld), 200, 'production (no retention of its own) keeps its 2-day-old event')
  })
}
