// Runner semantics over real HTTP: memoised steps across retries, NonRetriableError, and
// step.sendEvent delivering once although the run is retried after the send.
import t from 'tap'
import { getJson, startServer, eventually } from '../helpers/server.ts'
import { BASICS, finishedRuns, runsOf, sendEvent } from './fixtures/rest.ts'

const server = await startServer({ flags: { functionsFile: BASICS } })
t.teardown(() => server.stop())

t.test('a step that succeeded is not re-run when a later step fails and the run retries', async (t) => {
  const eventId = await sendEvent(server.url, { name: 'test/memo', data: {} })
  const [run] = await finishedRuns(server.url, eventId)
  t.equal(run.status, 'completed')
  t.equal(run.attempts, 2, 'one retry')
  t.same(run.output, { charge: { executions: 1 }, ship: { executions: 2 }, chargeExecutions: 1, attempt: 0 })
  t.same(
    run.steps.map((s: any) => [s.id, s.status, s.attempts]),
    [
      ['charge', 'completed', 1],
      ['ship', 'completed', 2],
    ],
  )
})

t.test('a retrying run shows the failed attempt and when the next one is due', async (t) => {
  const eventId = await sendEvent(server.url, { name: 'test/memo', data: {} })
  const waiting = await eventually(async () => {
    const { body } = await getJson(`${server.url}/v1/events/${eventId}/runs`)
    return body.data[0]?.next_attempt_at ? body.data[0] : undefined
  })
  t.equal(waiting.status, 'running')
  t.same(waiting.error, { name: 'Error', message: 'carrier unavailable', stack: waiting.error.stack })
  t.same(
    waiting.steps.map((s: any) => [s.id, s.status]),
    [
      ['charge', 'completed'],
      ['ship', 'retrying'],
    ],
  )
  const delayMs = Date.parse(waiting.next_attempt_at) - Date.parse(waiting.steps[1].ended_at)
  t.ok(delayMs >= 800 && delayMs <= 1200, `first backoff is 1 s ± 20% (${delayMs} ms)`)
  await finishedRuns(server.url, eventId)
})

t.test('NonRetriableError fails the run at once, with no retry, and emits sluice/function.failed', async (t) => {
  const eventId = await sendEvent(server.url, { name: 'test/reject', data: { order: 7 } })
  const [run] = await finishedRuns(server.url, eventId)
  t.equal(run.status, 'failed')
  t.equal(run.attempts, 1)
  t.equal(run.error.name, 'NonRetriableError')
  t.equal(run.error.message, 'rejected on execution 1')
  t.equal(run.next_attempt_at, null)
  const failed = await eventually(async () => {
    const { body } = await getJson(`${server.url}/v1/events?name=sluice/function.failed`)
    return body.data.find((e: any) => e.data.run_id === run.run_id)
  })
  t.equal(failed.env, 'production')
  t.same(failed.source, {
    kind: 'function',
    function_id: 'test-reject',
    run_id: run.run_id,
    step_id: 'sluice/function.failed',
  })
  t.same(failed.data, {
    function_id: 'test-reject',
    run_id: run.run_id,
    attempts: 1,
    error: { name: 'NonRetriableError', message: 'rejected on execution 1', code: 'NON_RETRIABLE' },
    event: { internal_id: eventId, id: eventId, name: 'test/reject', data: { order: 7 }, ts: failed.data.event.ts },
  })
})

t.test(
  'step.sendEvent triggers the second function exactly once although the run retries after the send',
  async (t) => {
    const eventId = await sendEvent(server.url, { name: 'test/send', data: {} })
    const [run] = await finishedRuns(server.url, eventId)
    t.equal(run.status, 'completed')
    t.equal(run.attempts, 2, 'the step after the send failed once')
    t.same(
      run.steps.map((s: any) => [s.id, s.attempts]),
      [
        ['notify', 1],
        ['after-send', 2],
      ],
    )
    const [sentId] = run.output.ids
    t.same(run.steps[0].output, { ids: [sentId] })
    const sent = (await getJson(`${server.url}/v1/events/${sentId}`)).body.data
    t.same(sent.source, { kind: 'function', function_id: 'test-sender', run_id: run.run_id, step_id: 'notify' })
    t.same(sent.data, { from: eventId })
    const [received] = await finishedRuns(server.url, sentId)
    t.same(received.output, { from: eventId, executions: 1 })
    // Exactly one event named test/notified from this run, and one receiver run for it.
    const notified = (await getJson(`${server.url}/v1/events?name=test/notified&limit=1000`)).body.data.filter(
      (e: any) => e.data.from === eventId,
    )
    t.equal(notified.length, 1)
    t.equal((await runsOf(server.url, `function=test-receiver&event=${sentId}`)).length, 1)
  },
)

t.test(
  "a step that never settles fails its attempt at the function's timeoutMs, with FUNCTION_TIMEOUT, and the run retries",
  async (t) => {
    const eventId = await sendEvent(server.url, { name: 'test/hang-step', data: {} })
    const waiting = await eventually(async () => {
      const { body } = await getJson(`${server.url}/v1/events/${eventId}/runs`)
      return body.data[0]?.next_attempt_at ? body.data[0] : undefined
    })
    t.match(waiting.error, {
      name: 'TimeoutError',
      code: 'FUNCTION_TIMEOUT',
      message: 'step "wait" ran over the function\'s timeoutMs (300 ms)',
    })
    t.same(
      waiting.steps.map((s: any) => [s.id, s.status]),
      [['wait', 'retrying']],
    )
    const [run] = await finishedRuns(server.url, eventId)
    t.equal(run.status, 'completed')
    t.equal(run.output, 'answered')
    t.equal(run.attempts, 2)
  },
)

t.test('a handler that never settles fails at its timeoutMs; with no retries left the run fails', async (t) => {
  const eventId = await sendEvent(server.url, { name: 'test/hang-handler', data: {} })
  const [run] = await finishedRuns(server.url, eventId)
  t.equal(run.status, 'failed')
  t.match(run.error, { code: 'FUNCTION_TIMEOUT', message: "the handler ran over the function's timeoutMs (300 ms)" })
})
