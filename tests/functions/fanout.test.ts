// Router and registry over real HTTP: fan-out to every function an event's name triggers,
// one run per (event, function), and the REST views of functions and runs.
import t from 'tap'
import { getJson, startServer, eventually } from '../helpers/server.ts'
import { BASICS, finishedRuns, runsOf, sendEvent } from './fixtures/rest.ts'

// One partition: the router then sees events in the order they were sent (used below).
const server = await startServer({ flags: { functionsFile: BASICS, partitions: '1' } })
t.teardown(() => server.stop())

t.test('the registry lists the functions of the served file, with their triggers', async (t) => {
  const { status, body } = await getJson(`${server.url}/v1/functions`)
  t.equal(status, 200)
  const fanA = body.data.find((f: any) => f.id === 'test-fan-a')
  t.same(fanA, {
    id: 'test-fan-a',
    env: 'production',
    app_id: 'test',
    function_id: 'fan-a',
    name: 'fan-a',
    triggers: [{ event: 'test/fanout' }],
    cancel_on: [],
    retries: 3,
    timeout_ms: 300_000,
    flow_control: null,
    paused: false,
    paused_at: null,
    registered_at: fanA.registered_at,
  })
  t.same(body.data.map((f: any) => f.id).sort(), [
    'test-fan-a',
    'test-fan-b',
    'test-hanging-handler',
    'test-hanging-step',
    'test-memo',
    'test-receiver',
    'test-reject',
    'test-sender',
    'test-verify-signature',
  ])
})

t.test('one event triggers both functions of its name, each exactly once', async (t) => {
  const eventId = await sendEvent(server.url, { name: 'test/fanout', data: { n: 1 } })
  const runs = await finishedRuns(server.url, eventId, 2)
  t.same(runs.map((r) => r.function_id).sort(), ['test-fan-a', 'test-fan-b'])
  for (const run of runs) {
    t.equal(run.status, 'completed')
    t.equal(run.attempts, 1)
    t.equal(run.event_id, eventId)
    t.same(run.output, { fn: run.function_id === 'test-fan-a' ? 'a' : 'b', executions: 1 })
  }
  // The run IDs are stable and each run reads back on its own.
  const one = await getJson(`${server.url}/v1/runs/${runs[0].run_id}`)
  t.same(one.body.data, runs[0])
})

t.test('an event no function is triggered by is stored and starts no run', async (t) => {
  const eventId = await sendEvent(server.url, { name: 'test/nobody-listens', data: {} })
  const stored = await eventually(async () => {
    const { status, body } = await getJson(`${server.url}/v1/events/${eventId}`)
    return status === 200 ? body.data : undefined
  })
  t.equal(stored.name, 'test/nobody-listens')
  // With one partition, the router has passed this event once an event sent after it has runs.
  const later = await sendEvent(server.url, { name: 'test/fanout', data: {} })
  await finishedRuns(server.url, later, 2)
  t.same((await getJson(`${server.url}/v1/events/${eventId}/runs`)).body.data, [])
})

t.test('runs are listed newest first and filter by function and status', async (t) => {
  const first = await sendEvent(server.url, { name: 'test/fanout', data: {} })
  const second = await sendEvent(server.url, { name: 'test/fanout', data: {} })
  await finishedRuns(server.url, second, 2)
  await finishedRuns(server.url, first, 2)
  const runs = await runsOf(server.url, 'function=test-fan-a&status=completed&limit=2')
  t.same(
    runs.map((r) => r.event_id),
    [second, first],
  )
  t.ok(runs.every((r) => r.function_id === 'test-fan-a' && r.status === 'completed'))
  const page = await getJson(`${server.url}/v1/runs?function=test-fan-a&limit=1`)
  t.equal(page.body.metadata.cursor, page.body.data[0].run_id)
  const next = await getJson(`${server.url}/v1/runs?function=test-fan-a&limit=1&cursor=${page.body.metadata.cursor}`)
  t.equal(next.body.data[0].event_id, first)
  t.same(await runsOf(server.url, 'function=test-fan-a&status=failed'), [])
})

t.test('bad run queries get clear 4xx answers', async (t) => {
  const badStatus = await getJson(`${server.url}/v1/runs?status=sleeping`)
  t.equal(badStatus.status, 400)
  t.equal(badStatus.body.code, 'REQUEST_INVALID')
  t.match(badStatus.body.error, /^query\.status: must be one of queued, running, waiting, completed, failed, cancelled/)
  const missing = await getJson(`${server.url}/v1/runs/01ARZ3NDEKTSV4RRFFQ69G5FAV`)
  t.equal(missing.status, 404)
  t.equal(missing.body.code, 'NOT_FOUND')
})
