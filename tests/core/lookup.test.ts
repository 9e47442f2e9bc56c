// GET /v1/events and /v1/events/<id>: filters, newest first, cursor pagination, clear errors.
import t from 'tap'
import { startServer, postJson, getJson, eventually } from '../helpers/server.ts'

const server = await startServer()
t.teardown(() => server.stop())
const ids: string[] = []
for (let i = 0; i < 7; i++)
  ids.push(
    ...(await postJson(`${server.url}/e/k`, { name: i % 2 ? 'odd/event' : 'even/event', data: { i }, id: `look-${i}` }))
      .body.ids,
  )
await eventually(async () =>
  (await getJson(`${server.url}/v1/events?limit=100`)).body.data.length === 7 ? true : undefined,
)

t.test('lists newest first in {data, metadata} with snake_case fields', async (t) => {
  const r = await getJson(`${server.url}/v1/events`)
  t.same(
    r.body.data.map((e: { internal_id: string }) => e.internal_id),
    [...ids].reverse(),
  )
  t.same(Object.keys(r.body.data[0]).sort(), [
    'data',
    'env',
    'id',
    'internal_id',
    'name',
    'received_at',
    'source',
    'ts',
  ])
  t.same(r.body.metadata, { cursor: null, limit: 50 })
})

t.test('pages with a cursor until it is null', async (t) => {
  const seen: string[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const r: { body: { data: Array<{ internal_id: string }>; metadata: { cursor: string | null } } } = await getJson(
      `${server.url}/v1/events?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
    )
    seen.push(...r.body.data.map((e) => e.internal_id))
    cursor = r.body.metadata.cursor
    pages++
  } while (cursor)
  t.equal(pages, 3)
  t.same(seen, [...ids].reverse())
})

t.test('filters by id, name, env and receive time', async (t) => {
  t.same(
    (await getJson(`${server.url}/v1/events?id=look-3`)).body.data.map((e: { data: unknown }) => e.data),
    [{ i: 3 }],
  )
  t.equal((await getJson(`${server.url}/v1/events?name=odd/event`)).body.data.length, 3)
  t.equal((await getJson(`${server.url}/v1/events?env=staging`)).body.data.length, 0)
  const future = Date.now() + 60_000
  t.equal((await getJson(`${server.url}/v1/events?received_after=${future}`)).body.data.length, 0)
  t.equal(
    (await getJson(`${server.url}/v1/events?received_before=${new Date(future).toISOString()}`)).body.data.length,
    7,
    'ISO times too',
  )
})

t.test('bad parameters are a 400 naming the parameter; unknown IDs a 404', async (t) => {
  t.same((await getJson(`${server.url}/v1/events?limit=0`)).body, {
    status: 400,
    code: 'REQUEST_INVALID',
    error: 'query.limit: must be >= 1',
  })
  t.equal(
    (await getJson(`${server.url}/v1/events?received_after=yesterday`)).body.error,
    'query.received_after: must be an integer (milliseconds) or an ISO 8601 time',
  )
  t.equal(
    (await getJson(`${server.url}/v1/events?cursor=abc`)).body.error,
    'query.cursor: not a cursor returned by this API',
  )
  const missing = await getJson(`${server.url}/v1/events/01ARZ3NDEKTSV4RRFFQ69G5FAV`)
  t.equal(missing.status, 404)
  t.equal(missing.body.code, 'NOT_FOUND')
  t.equal((await getJson(`${server.url}/v1/events/not-an-id`)).status, 404)
})
