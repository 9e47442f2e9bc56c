// Retention per environment and erasure through the REST API of an embedded server, on its real
// RocksDB: bad input changes nothing; a retention applies at the next pass (one runs at start);
// an erasure job ends `done` with its counts, and a job a stopped server left half done is
// continued by the next start, each deletion counted once.
import t from 'tap'
import { join } from 'node:path'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { newIdSeed } from '../../core/ids.ts'
import { openRocks } from '../../core/rocks.ts'
import { createRocksControlStore } from '../../control/rocksdb.ts'
import type { ErasureDoc } from '../../control/types.ts'
import { createWebhook, deliver, outcome, storedEvents } from '../webhooks/helpers.ts'
import { TEST_SIGNING_KEY, eventually, getJson, postJson, startServer, tempDir } from '../helpers/server.ts'

const DAY = 24 * 60 * 60_000

const auth = { authorization: `Bearer ${TEST_SIGNING_KEY}` }

async function call(base: string, method: string, path: string, body?: unknown) {
  const init: RequestInit = { method, headers: auth }
  if (body !== undefined)
    Object.assign(init, { headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const response = await fetch(base + path, init)
  return { status: response.status, body: await response.json() }
}

const envOf = async (base: string, name: string) =>
  (await getJson(`${base}/v1/envs`)).body.data.find((e: { name: string }) => e.name === name)

t.test('PATCH /v1/envs/<env> retention_days: bad values are refused naming the field, nothing changes', async (t) => {
  const server = await startServer()
  t.teardown(server.stop)
  const rest = (method: string, path: string, body?: unknown) => call(server.url, method, path, body)
  await rest('POST', '/v1/envs', { name: 'staging' })
  const none = { events: null, runs: null, requests: null }
  t.same((await envOf(server.url, 'staging')).retention_days, none, 'the default until set')
  const bad: Array<[unknown, string]> = [
    [{ events: 0 }, 'body.retention_days.events: must be >= 1'],
    [{ runs: 1.5 }, 'body.retention_days.runs'],
    [{ requests: '7' }, 'body.retention_days.requests'],
    [{ events: 40_000 }, 'body.retention_days.events: must be <= 36500'],
    [{ days: 3 }, 'body.retention_days'],
    [7, 'body.retention_days'],
  ]
  for (const [retention_days, error] of bad) {
    const r = await rest('PATCH', '/v1/envs/staging', { retention_days, max_body_bytes: 4096 })
    t.equal(r.status, 400, JSON.stringify(retention_days))
    t.equal(r.body.code, 'REQUEST_INVALID')
    t.match(r.body.error, error)
  }
  const after = await envOf(server.url, 'staging')
  t.same([after.retention_days, after.max_body_bytes], [none, null], 'nothing changed, the other field neither')

  const set = await rest('PATCH', '/v1/envs/staging', { retention_days: { events: 1, requests: 7 } })
  t.same(set.body.data.retention_days, { events: 1, runs: null, requests: 7 })
  const partly = await rest('PATCH', '/v1/envs/staging', { retention_days: { events: null, runs: 30 } })
  t.same(partly.body.data.retention_days, { events: null, runs: 30, requests: 7 }, 'null gives a kind back')
  t.same((await envOf(server.url, 'staging')).retention_days, { events: null, runs: 30, requests: 7 }, 'GET shows it')
  t.equal((await rest('PATCH', '/v1/envs/nowhere', { retention_days: { events: 1 } })).status, 404)
})

t.test("an environment's retention deletes its older events at the next pass; others keep theirs", async (t) => {
  const dataDir = await tempDir()
  // The server-wide default: 10 days, so production keeps a 2-day-old event.
  const env = { SLUICE_EVENT_RETENTION_MS: String(10 * DAY) }
  // sluice start: keys write to their own environments (in dev mode every key writes to production).
  let server = await startServer({ dataDir, env, mode: 'start' })
  const rest = (method: string, path: string, body?: unknown) => call(server.url, method, path, body)
  await rest('POST', '/v1/envs', { name: 'short' })
  t.equal((await rest('PATCH', '/v1/envs/short', { retention_days: { events: 1 } })).status, 200)
  const shortKey = (await rest('POST', '/v1/keys', { env: 'short' })).body.data.key
  const prodKey = (await rest('POST', '/v1/keys', { env: 'production' })).body.data.key
  const send = (headers: Record<string, string>, name: string, key = prodKey) =>
    postJson(`${server.url}/e/${key}`, { name, data: {} }, headers)
  const old = () => ({ 'x-service-event-id-seed': newIdSeed(Date.now() - 2 * DAY) })
  const ids = {
    shortOld: (await send(old(), 'r/short-old', shortKey)).body.ids[0],
    shortNew: (await send({}, 'r/short-new', shortKey)).body.ids[0],
    prodOld: (await send(old(), 'r/prod-old')).body.ids[0],
    prodAncient: (await send({ 'x-service-event-id-seed': newIdSeed(Date.now() - 11 * DAY) }, 'r/prod')).body.ids[0],
  }
  await server.stop()
  server = await startServer({ dataDir, env, mode: 'start' })
  t.teardown(() => server.stop())
  const status = async (id: string) => (await getJson(`${server.url}/v1/events/${id}`, auth)).status
  await eventually(async () => ((await status(ids.shortOld)) === 404 ? true : undefined))
  t.equal(await status(ids.prodAncient), 404, "production's 11-day-old event is past the default")
  t.equal(await status(ids.shortNew), 200, "short's fresh event stays")
  t.equal(await status(ids.prodOld), 200, "production's 2-day-old event stays (the default is 10 days)")
  const listed = await getJson(`${server.url}/v1/events?env=short`, auth)
  t.same(
    listed.body.data.map((e: { internal_id: string }) => e.internal_id),
    [ids.shortNew],
    'short lists its fresh event only',
  )
})

t.test(
  'POST /v1/erasures deletes the events, and the raw requests they came from; bad input changes nothing',
  async (t) => {
    const server = await startServer()
    t.teardown(server.stop)
    const rest = (method: string, path: string, body?: unknown) => call(server.url, method, path, body)
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ env: 'nowhere', path: 'data.user.id', value: 'u-1' }, 'body.env: environment "nowhere" does not exist'],
      [{ env: 'production', path: 'user.id', value: 'u-1' }, 'body.path: must be "data."'],
      [{ env: 'production', path: 'data..id', value: 'u-1' }, 'body.path'],
      [{ env: 'production', path: 'data', value: 'u-1' }, 'body.path'],
      [{ env: 'production', path: 'data.user.id' }, 'body.value: required'],
      [{ env: 'production', path: 'data.user.id', value: { id: 1 } }, 'body.value'],
    ]
    for (const [body, error] of bad) {
      const r = await rest('POST', '/v1/erasures', body)
      t.same([r.status, r.body.code], [400, 'REQUEST_INVALID'], JSON.stringify(body))
      t.match(r.body.error, error)
    }
    t.same((await rest('GET', '/v1/erasures')).body.data, [], 'no job was made')

    const hook = await createWebhook(server.url, { name: 'signup' })
    const delivered = await deliver(hook.url, { user: { id: 'u-1', email: 'a@example.com' } })
    const request = await outcome(server.url, hook.id, delivered.body.request_id)
    const [fromHook] = await storedEvents(server.url, request.event_ids)
    const direct = (await postJson(`${server.url}/e/any`, { name: 'app/login', data: { user: { id: 'u-1' } } })).body
    const other = (await postJson(`${server.url}/e/any`, { name: 'app/login', data: { user: { id: 'u-2' } } })).body
    await storedEvents(server.url, [direct.ids[0], other.ids[0]])

    const started = await rest('POST', '/v1/erasures', { env: 'production', path: 'data.user.id', value: 'u-1' })
    t.equal(started.status, 202)
    t.equal(started.body.data.status, 'running')
    t.notOk(JSON.stringify(started.body).includes('u-1'), 'the value is not shown back')
    const id = started.body.data.id
    const done = await eventually(async () => {
      const job = (await rest('GET', `/v1/erasures/${id}`)).body.data
      return job.status === 'done' ? job : undefined
    })
    t.same(done.counts, { events: 2, runs: 0, requests: 1 })
    for (const gone of [fromHook.internal_id, direct.ids[0]])
      t.equal((await getJson(`${server.url}/v1/events/${gone}`)).status, 404, 'the event is gone')
    t.equal((await getJson(`${server.url}/v1/events/${other.ids[0]}`)).status, 200, "another person's stays")
    const requests = await getJson(`${server.url}/v1/webhooks/${hook.id}/requests`)
    t.same(requests.body.data, [], 'the raw request is gone')
    t.equal((await rest('GET', '/v1/erasures/erasure_nope')).status, 404)
  },
)

t.test('an erasure a stopped server left half done is continued at start, each deletion counted once', async (t) => {
  const dataDir = await tempDir()
  let server = await startServer({ dataDir })
  const ids: string[] = []
  for (const n of [1, 2, 3])
    ids.push((await postJson(`${server.url}/e/any`, { name: 'app/n', data: { user: { id: 'u-9' }, n } })).body.ids[0])
  await storedEvents(server.url, ids)
  await server.stop()
  // As a process killed between saving a page and deleting it leaves the job: that page pending,
  // held by its lease, which has run out.
  const rocks = await openRocks(join(dataDir, 'db'), rocksOptionsOf(DEFAULTS))
  const control = await createRocksControlStore(rocks)
  const job: ErasureDoc = {
    id: 'erasure_halfway',
    env: 'production',
    path: 'data.user.id',
    value: 'u-9',
    valueFingerprint: 'x',
    status: 'running',
    counts: { events: 5, runs: 0, requests: 0 },
    cursor: ids[2],
    scanned: false,
    pending: { events: [ids[2]], runs: [], requests: [] },
    failures: 0,
    createdAt: Date.now(),
    updatedAt: Date.now(),
    lease: { owner: 'gone:1', until: Date.now() - 1 },
  }
  await control.put('erasure', job.id, job)
  await rocks.close()
  server = await startServer({ dataDir })
  t.teardown(() => server.stop())
  const done = await eventually(async () => {
    const r = (await getJson(`${server.url}/v1/erasures/${job.id}`)).body.data
    return r.status === 'done' ? r : undefined
  })
  t.same(done.counts, { events: 5 + 3, runs: 0, requests: 0 }, 'the pending one once, then the two below the cursor')
  for (const id of ids) t.equal((await getJson(`${server.url}/v1/events/${id}`)).status, 404)
})
