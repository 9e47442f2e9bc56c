// The REST routes the dashboard adds: the live event stream, replaying an event to its functions,
// retrying a failed run from its completed steps, and cancelling a run that has not ended.
import t from 'tap'
import { eventually, getJson, postJson, ROOT, startServer, TEST_SIGNING_KEY } from '../helpers/server.ts'
import { finishedRuns, sendEvent } from '../functions/fixtures/rest.ts'

const FUNCTIONS = `${ROOT}tests/dashboard/fixtures/functions.ts`
const server = await startServer({ flags: { functionsFile: FUNCTIONS } })
t.teardown(() => server.stop())

/** The `event: event` messages of a stream until `count` arrived, then closes it. */
async function readStream(
  url: string,
  count: number,
  headers: Record<string, string> = {},
  whileOpen?: () => Promise<void>,
): Promise<any[]> {
  const abort = new AbortController()
  const response = await fetch(url, { headers, signal: abort.signal })
  if (response.status !== 200) throw new Error(`stream: ${response.status} ${await response.text()}`)
  const events: any[] = []
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  const opened = whileOpen?.()
  const timeout = setTimeout(() => abort.abort(), 10_000)
  try {
    while (events.length < count) {
      const chunk = await reader.read()
      if (chunk.done) break
      buffer += chunk.value
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        if (block.startsWith('event: event\n')) events.push(JSON.parse(block.slice(block.indexOf('data: ') + 6)))
      }
    }
  } finally {
    clearTimeout(timeout)
    abort.abort()
    await opened
  }
  return events
}

t.test('the stream sends events stored after it opened, oldest first, filtered by name', async (t) => {
  const before = await sendEvent(server.url, { name: 'stream/a', data: { n: 0 } })
  await eventually(async () => ((await getJson(`${server.url}/v1/events/${before}`)).status === 200 ? true : undefined))
  const events = await readStream(`${server.url}/v1/events/stream?name=stream/a`, 2, {}, async () => {
    await sendEvent(server.url, { name: 'stream/other', data: {} })
    await sendEvent(server.url, { name: 'stream/a', data: { n: 1 } })
    await sendEvent(server.url, { name: 'stream/a', data: { n: 2 } })
  })
  t.same(
    events.map((e) => [e.name, e.data.n]),
    [
      ['stream/a', 1],
      ['stream/a', 2],
    ],
    'not the one stored before, not the other name',
  )
  t.match(
    events[0],
    { internal_id: String, id: String, env: 'production', source: { kind: 'api' } },
    'shaped as GET /v1/events shows it',
  )
})

t.test('with since, the stream first sends the stored events received since then', async (t) => {
  const id = await sendEvent(server.url, { name: 'stream/since', data: {} })
  const stored = await eventually(async () => (await getJson(`${server.url}/v1/events/${id}`)).body.data)
  const events = await readStream(`${server.url}/v1/events/stream?name=stream/since&since=${stored.received_at}`, 1)
  t.equal(events[0].internal_id, id)
})

t.test('bad stream parameters are a 400 naming the field', async (t) => {
  const response = await fetch(`${server.url}/v1/events/stream?since=yesterday`)
  t.equal(response.status, 400)
  t.match(await response.json(), { status: 400, code: 'REQUEST_INVALID', error: /since/ })
})

t.test('outside dev mode the stream needs the signing key, in the Authorization header', async (t) => {
  const prod = await startServer({ mode: 'start' })
  t.teardown(() => prod.stop())
  const denied = await fetch(`${prod.url}/v1/events/stream`)
  t.equal(denied.status, 401)
  t.match(await denied.json(), { code: 'UNAUTHORIZED' })
  const key = 'stream-test-key'
  const events = await readStream(
    `${prod.url}/v1/events/stream`,
    1,
    { authorization: `Bearer ${TEST_SIGNING_KEY}` },
    async () => {
      const { body } = await postJson(
        `${prod.url}/v1/keys`,
        { env: 'production' },
        { authorization: `Bearer ${TEST_SIGNING_KEY}` },
      )
      const sent = await postJson(`${prod.url}/e/${body.data.key}`, { name: 'stream/prod', data: { key } })
      t.equal(sent.status, 200)
    },
  )
  t.equal(events[0].name, 'stream/prod')
})

t.test('a replay sends a copy as a new event, so its functions run again', async (t) => {
  const original = await sendEvent(server.url, {
    name: 'shop/order.placed',
    data: { sku: 'A1', amount: 12 },
    id: 'order-1',
  })
  const [first] = await finishedRuns(server.url, original)
  t.equal(first.status, 'failed', 'declined the first time')
  const { status, body } = await postJson(`${server.url}/v1/events/${original}/replay`, {})
  t.equal(status, 202)
  t.equal(body.data.replay_of, original)
  const copy = await eventually(
    async () => (await getJson(`${server.url}/v1/events/${body.data.internal_id}`)).body.data,
  )
  t.match(copy, {
    name: 'shop/order.placed',
    data: { sku: 'A1', amount: 12 },
    id: body.data.internal_id,
    source: { kind: 'replay', event_id: original },
  })
  const [run] = await finishedRuns(server.url, copy.internal_id)
  t.equal(run.status, 'failed', 'a new run of its own (the copy is a new event)')
  t.not(run.run_id, first.run_id)
  t.equal((await postJson(`${server.url}/v1/events/01ARZ3NDEKTSV4RRFFQ69G5FAV/replay`, {})).status, 404)
})

t.test('a failed run retried continues from its completed steps and completes', async (t) => {
  const eventId = await sendEvent(server.url, { name: 'shop/order.placed', data: { sku: 'B2', amount: 30 } })
  const [failed] = await finishedRuns(server.url, eventId)
  t.equal(failed.status, 'failed')
  t.same(
    failed.steps.map((s: any) => [s.id, s.status]),
    [
      ['reserve-stock', 'completed'],
      ['charge-card', 'failed'],
    ],
  )
  const { status, body } = await postJson(`${server.url}/v1/runs/${failed.run_id}/retry`, {})
  t.equal(status, 202)
  t.match(body.data, {
    run_id: failed.run_id,
    status: 'queued',
    attempts: failed.attempts + 1,
    steps: [{ id: 'reserve-stock', status: 'completed' }],
    event_id: eventId,
  })
  const again = await postJson(`${server.url}/v1/runs/${failed.run_id}/retry`, {})
  t.ok(again.status === 202 || again.status === 409, 'a second click while queued: the same retry, or refused')
  const done = await eventually(async () => {
    const { body } = await getJson(`${server.url}/v1/runs/${failed.run_id}`)
    return body.data.status === 'completed' ? body.data : undefined
  })
  t.same(
    done.output,
    { reserved: { sku: 'B2', reserved: true }, charged: { charged: 30, executions: 2 } },
    'charge-card ran once more, reserve-stock was not re-run',
  )
  t.same(
    done.steps.map((s: any) => [s.id, s.status]),
    [
      ['reserve-stock', 'completed'],
      ['charge-card', 'completed'],
    ],
  )
  const refused = await postJson(`${server.url}/v1/runs/${failed.run_id}/retry`, {})
  t.equal(refused.status, 409)
  t.match(refused.body, { code: 'RUN_NOT_RETRIABLE', error: /is completed/ })
})

t.test('a run waiting for a retry is cancelled at once and runs no more attempts', async (t) => {
  const eventId = await sendEvent(server.url, { name: 'shop/sync.requested', data: {} })
  const parked = await eventually(async () => {
    const run = (await getJson(`${server.url}/v1/events/${eventId}/runs`)).body.data[0]
    return run?.next_attempt_at ? run : undefined
  })
  const refused = await postJson(`${server.url}/v1/runs/${parked.run_id}/retry`, {})
  t.equal(refused.status, 409, 'not failed: no retry')
  t.equal((await postJson(`${server.url}/v1/runs/${parked.run_id}/cancel`, {})).status, 202)
  const dueAt = Date.parse(parked.next_attempt_at)
  const cancelled = await eventually(async () => {
    const { body } = await getJson(`${server.url}/v1/runs/${parked.run_id}`)
    return body.data.status === 'cancelled' ? body.data : undefined
  })
  t.match(cancelled, {
    status: 'cancelled',
    next_attempt_at: null,
    cancelled_by: { kind: 'api' },
    error: { code: 'RUN_CANCELLED' },
    ended_at: String,
  })
  t.same(cancelled.steps, [], 'the retry it waited for is not shown as pending any more')
  // Past the retry it was waiting for.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, dueAt - Date.now()) + 1_000))
  const { body } = await getJson(`${server.url}/v1/runs/${parked.run_id}`)
  t.equal(body.data.status, 'cancelled', 'still cancelled: the parked retry was dropped')
  t.equal(body.data.attempts, cancelled.attempts, 'no attempt after the cancel')
  const again = await postJson(`${server.url}/v1/runs/${parked.run_id}/cancel`, {})
  t.equal(again.status, 409)
  t.match(again.body, { code: 'RUN_NOT_CANCELLABLE', error: /is cancelled/ })
})

t.test('a run cancelled while a step runs: the step finishes, nothing after it runs', async (t) => {
  const eventId = await sendEvent(server.url, { name: 'shop/export.requested', data: {} })
  const running = await eventually(async () => {
    const run = (await getJson(`${server.url}/v1/events/${eventId}/runs`)).body.data[0]
    return run?.status === 'running' ? run : undefined
  })
  t.same(running.steps, [], 'the first step is in flight')
  t.equal((await postJson(`${server.url}/v1/runs/${running.run_id}/cancel`, {})).status, 202)
  const cancelled = await eventually(async () => {
    const { body } = await getJson(`${server.url}/v1/runs/${running.run_id}`)
    return body.data.status === 'cancelled' ? body.data : undefined
  })
  t.same(
    cancelled.steps.map((s: any) => [s.id, s.status, s.output]),
    [['export', 'completed', { rows: 3 }]],
    'the step in flight finished and kept its result; the next one never ran',
  )
  t.same(cancelled.cancelled_by, { kind: 'api' })
})

t.test('functions show their flow control (snake_case, milliseconds) and whether they are paused', async (t) => {
  const listed = async (id: string) =>
    (await getJson(`${server.url}/v1/functions`)).body.data.find((f: any) => f.id === id)
  const flow = async (id: string) => (await listed(id)).flow_control
  t.same(await flow('flow-per-customer'), { concurrency: [{ limit: 1, key: 'event.data.customer', scope: 'fn' }] })
  t.same(await flow('flow-throttled'), { throttle: { limit: 2, period_ms: 2_000, burst: 1 } })
  t.same(await flow('flow-limited'), { rate_limit: { limit: 3, period_ms: 60_000, key: 'event.data.user' } })
  t.same(await flow('flow-debounced'), { debounce: { period_ms: 1_000, key: 'event.data.k', timeout_ms: 4_000 } })
  t.same(await flow('flow-batched'), { batch_events: { max_size: 3, timeout_ms: 1_000 } })
  t.same(await flow('flow-prioritized'), {
    concurrency: [{ limit: 1, scope: 'fn' }],
    priority: { run: 'event.data.vip == true ? 600 : 0' },
  })
  t.same(await flow('flow-idempotent'), { idempotency: 'event.data.order' })
  t.same(await flow('flow-latest-wins'), { singleton: { key: 'event.data.account', mode: 'cancel' } })
  t.match(await listed('shop-checkout'), { flow_control: null, paused: false, paused_at: null })

  t.equal((await postJson(`${server.url}/v1/functions/flow-idempotent/pause`, {})).status, 200)
  t.match(await listed('flow-idempotent'), { paused: true, paused_at: String })
  t.equal((await postJson(`${server.url}/v1/functions/flow-idempotent/resume`, {})).status, 200)
  t.match(await listed('flow-idempotent'), { paused: false, paused_at: null })
})

t.test('runs filter by event name and queue time, as a bulk action does; the page goes on past them', async (t) => {
  const first = await sendEvent(server.url, { name: 'flow/plain', data: { n: 'first' } })
  const [firstRun] = await finishedRuns(server.url, first)
  const second = await sendEvent(server.url, { name: 'flow/plain', data: { n: 'second' } })
  const [secondRun] = await finishedRuns(server.url, second)
  const runs = async (q: string) => (await getJson(`${server.url}/v1/runs?${q}`)).body
  const named = await runs('event_name=flow/plain')
  t.ok(named.data.length >= 2 && named.data.every((r: any) => r.event_name === 'flow/plain'), 'only that name')
  const after = Date.parse(firstRun.queued_at) - 1
  t.same(
    (await runs(`event_name=flow/plain&queued_after=${after}`)).data.map((r: any) => r.run_id),
    [secondRun.run_id, firstRun.run_id],
    'queued after: newest first',
  )
  const page = await runs(`event_name=flow/plain&queued_after=${after}&limit=1`)
  t.same(
    page.data.map((r: any) => r.run_id),
    [secondRun.run_id],
  )
  const next = await runs(`event_name=flow/plain&queued_after=${after}&limit=1&cursor=${page.metadata.cursor}`)
  t.same(
    next.data.map((r: any) => r.run_id),
    [firstRun.run_id],
    'the cursor goes on below the last run',
  )
  const before = await runs(`event_name=flow/plain&queued_before=${secondRun.queued_at}&queued_after=${after}`)
  t.same(
    before.data.map((r: any) => r.run_id),
    [firstRun.run_id],
    'queued before, ISO 8601',
  )
  const bad = await getJson(`${server.url}/v1/runs?queued_after=yesterday`)
  t.match(bad, { status: 400, body: { code: 'REQUEST_INVALID', error: /queued_after/ } })

  const filter = { function: 'flow-plain', status: 'waiting', queued_after: after }
  const job = await postJson(`${server.url}/v1/runs/bulk`, { action: 'cancel', filter })
  t.equal(job.status, 202)
  t.same(
    job.body.data.filter,
    { function: 'flow-plain', status: 'waiting', queued_after: new Date(after).toISOString() },
    'a job shows what it acts on',
  )
})
