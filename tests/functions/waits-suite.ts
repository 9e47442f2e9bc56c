// The behaviour of functions that wait, as a user sees it over HTTP: run once against an embedded
// server (waits.test.ts) and once against distributed nodes on real Kafka and ClickHouse
// (tests/distributed/waits.test.ts). The functions are tests/functions/fixtures/waits.ts.
import type { Test } from 'tap'
import { eventually, getJson, postJson } from '../helpers/server.ts'

export interface WaitsTarget {
  /** Where events are sent (`/e/<key>`). */
  ingestUrl: string
  eventKey: string
  /** Where the REST API answers, and the headers it needs. */
  apiUrl: string
  headers: Record<string, string>
}

const FINAL = new Set(['completed', 'failed', 'cancelled'])

export function waitsSuite(t: Test, target: () => WaitsTarget, timeoutMs = 20_000) {
  const send = async (name: string, data: Record<string, unknown>): Promise<string> => {
    const { ingestUrl, eventKey } = target()
    const response = await postJson(`${ingestUrl}/e/${eventKey}`, { name, data })
    if (response.status !== 200) throw new Error(`send failed: ${JSON.stringify(response.body)}`)
    return response.body.ids[0]
  }
  const runsOf = async (eventId: string): Promise<any[]> => {
    const { apiUrl, headers } = target()
    return (await getJson(`${apiUrl}/v1/events/${eventId}/runs`, headers)).body.data ?? []
  }
  /** The run of `functionId` started by the event, once `ready` holds for it. */
  const runOf = (eventId: string, functionId: string, ready: (run: any) => boolean = (r) => FINAL.has(r.status)) =>
    eventually(
      async () => {
        const run = (await runsOf(eventId)).find((r) => r.function_id === functionId)
        return run && ready(run) ? run : undefined
      },
      timeoutMs,
      50,
    )
  const waiting = (run: any) => run.status === 'waiting'
  const unique = () => Math.random().toString(36).slice(2, 10)

  t.test('step.sleep: the run shows as waiting, until when, then resumes after the duration', async (t) => {
    const sentAt = Date.now()
    const id = await send('test/sleep', { sleep: '2s' })
    const asleep = await runOf(id, 'waits-sleeper', waiting)
    t.match(asleep.waiting_for, { kind: 'sleep' }, 'waiting for a sleep')
    const until = Date.parse(asleep.waiting_for.until)
    t.ok(until - Date.parse(asleep.waiting_for.started_at) === 2000, 'until is 2 s after it began')
    const run = await runOf(id, 'waits-sleeper')
    t.equal(run.status, 'completed')
    t.ok(run.output.woke >= until, 'resumed no earlier than the sleep ends')
    t.ok(run.output.woke - sentAt >= 2000)
    t.match(
      run.steps.map((s: any) => [s.id, s.status, s.pause?.kind ?? null]),
      [
        ['before', 'completed', null],
        ['nap', 'completed', 'sleep'],
        ['after', 'completed', null],
      ],
    )
  })

  t.test('step.sleepUntil a time past continues at once', async (t) => {
    const id = await send('test/sleep', { until: new Date(Date.now() - 60_000).toISOString() })
    const run = await runOf(id, 'waits-sleeper')
    t.equal(run.status, 'completed')
    t.same(
      run.steps.map((s: any) => s.id),
      ['before', 'nap', 'after'],
    )
  })

  t.test('step.waitForEvent with match: the matching event resumes the run, and only that run', async (t) => {
    const [a, b] = [unique(), unique()]
    const runA = await send('test/ordered', { order: a })
    const runB = await send('test/ordered', { order: b })
    await runOf(runA, 'waits-orders', waiting)
    await runOf(runB, 'waits-orders', waiting)
    const paid = await send('test/paid', { order: a, amount: 42 })
    const done = await runOf(runA, 'waits-orders')
    t.equal(done.status, 'completed')
    t.same(done.output, { amount: 42 })
    const pay = done.steps.find((s: any) => s.id === 'paid')
    t.match(pay.pause, { kind: 'event', event: 'test/paid', match: 'data.order', matched_event_id: paid })
    t.equal(pay.output.internalId, paid, 'the step returns the awaited event')
    t.equal((await runOf(runB, 'waits-orders', waiting)).status, 'waiting', 'the other order still waits')
    await send('test/refunded', { order: b })
    t.equal((await runOf(runB, 'waits-orders')).status, 'cancelled', 'and is cancelled by its refund')
  })

  t.test('step.waitForEvent returns null at the timeout', async (t) => {
    const id = await send('test/ordered', { order: unique(), timeout: '1s' })
    const run = await runOf(id, 'waits-orders')
    t.equal(run.status, 'completed')
    t.same(run.output, { amount: null })
    t.match(run.steps.find((s: any) => s.id === 'paid').pause, { kind: 'event', timed_out: true })
  })

  t.test('only events received after the wait began match; one event resumes every run waiting on it', async (t) => {
    const order = unique()
    const early = await send('test/paid', { order, amount: 1 })
    const [first, second] = [await send('test/ordered', { order }), await send('test/ordered', { order })]
    await runOf(first, 'waits-orders', waiting)
    await runOf(second, 'waits-orders', waiting)
    const late = await send('test/paid', { order, amount: 2 })
    for (const id of [first, second]) {
      const run = await runOf(id, 'waits-orders')
      t.same(run.output, { amount: 2 }, 'resumed by the later event, not the earlier one')
      t.equal(run.steps.find((s: any) => s.id === 'paid').pause.matched_event_id, late)
    }
    t.not(early, late)
    await send('test/paid', { order, amount: 3 }) // resumes nothing: each run resumed once
    await new Promise((r) => setTimeout(r, 1000))
    for (const id of [first, second]) t.same((await runOf(id, 'waits-orders')).output, { amount: 2 })
  })

  t.test('step.waitForEvent with an `if` expression over event and async', async (t) => {
    const user = unique()
    const id = await send('test/signup', { user })
    await runOf(id, 'waits-upgrades', waiting)
    await send('test/upgraded', { user, plan: 'basic' }) // the plan does not match
    await send('test/upgraded', { user: unique(), plan: 'pro' }) // another user
    await new Promise((r) => setTimeout(r, 500))
    t.equal((await runOf(id, 'waits-upgrades', () => true)).status, 'waiting')
    const upgrade = await send('test/upgraded', { user, plan: 'pro' })
    t.same((await runOf(id, 'waits-upgrades')).output, { upgradedBy: upgrade })
  })

  t.test('cancelOn ends a run waiting for a retry; the cause is shown', async (t) => {
    const job = unique()
    const id = await send('test/flaky', { job })
    await runOf(id, 'waits-flaky', (r) => r.next_attempt_at !== null)
    const stop = await send('test/stop', { job })
    const run = await runOf(id, 'waits-flaky')
    t.equal(run.status, 'cancelled')
    t.same(run.cancelled_by, { kind: 'event', event_id: stop, event_name: 'test/stop' })
    t.equal(run.error.code, 'RUN_CANCELLED')
  })

  t.test('POST /v1/runs/<id>/cancel ends a waiting run; a second cancel of the ended run is 409', async (t) => {
    const { apiUrl, headers } = target()
    const id = await send('test/ordered', { order: unique() })
    const asleep = await runOf(id, 'waits-orders', waiting)
    const cancel = await postJson(`${apiUrl}/v1/runs/${asleep.run_id}/cancel`, {}, headers)
    t.equal(cancel.status, 202)
    const run = await runOf(id, 'waits-orders')
    t.equal(run.status, 'cancelled')
    t.same(run.cancelled_by, { kind: 'api' })
    const again = await postJson(`${apiUrl}/v1/runs/${asleep.run_id}/cancel`, {}, headers)
    t.equal(again.status, 409)
    t.equal(again.body.code, 'RUN_NOT_CANCELLABLE')
  })

  t.test('step.invoke returns the invoked function’s result; its failure fails the caller for good', async (t) => {
    const ok = await send('test/call', { n: 21 })
    const run = await runOf(ok, 'waits-caller')
    t.equal(run.status, 'completed')
    t.same(run.output, { result: 42 })
    const call = run.steps.find((s: any) => s.id === 'call')
    t.match(call.pause, { kind: 'invoke', function: 'waits-double' })
    const { apiUrl, headers } = target()
    const child = (await getJson(`${apiUrl}/v1/runs/${call.pause.run_id}`, headers)).body.data
    t.match(child, { function_id: 'waits-double', status: 'completed', output: 42 }, 'the invoked run is a run')

    const bad = await send('test/call', {})
    const failed = await runOf(bad, 'waits-caller')
    t.equal(failed.status, 'failed')
    t.match(failed.error.message, /function "waits-double" failed: no n/)
    t.equal(failed.attempts, 1, 'not retried: the invoked function failed for good')

    const unknown = await send('test/call', { target: 'waits-nope', n: 1 })
    const refused = await runOf(unknown, 'waits-caller')
    t.equal(refused.status, 'failed')
    t.equal(refused.error.code, 'INVOKE_UNKNOWN_FUNCTION')
  })

  t.test('triggers: a wildcard with an `if` filter, and an array of triggers', async (t) => {
    const vip = await send('shop/order.placed', { vip: true })
    t.equal((await runOf(vip, 'waits-vip')).output, 'shop/order.placed')
    const other = await send('shop/order.placed', { vip: false })
    const alsoVip = await send('test/vip', {})
    t.equal((await runOf(alsoVip, 'waits-vip')).output, 'test/vip')
    t.notOk(
      (await runsOf(other)).some((r) => r.function_id === 'waits-vip'),
      'the filter kept the non-VIP event out',
    )
  })

  t.test('runs can be listed by status waiting and cancelled', async (t) => {
    const { apiUrl, headers } = target()
    const id = await send('test/ordered', { order: unique() })
    const run = await runOf(id, 'waits-orders', waiting)
    const listed = await eventually(async () => {
      const { body } = await getJson(`${apiUrl}/v1/runs?status=waiting&function=waits-orders&limit=1000`, headers)
      return body.data.some((r: any) => r.run_id === run.run_id) ? body.data : undefined
    }, timeoutMs)
    t.ok(listed.every((r: any) => r.status === 'waiting'))
    await postJson(`${apiUrl}/v1/runs/${run.run_id}/cancel`, {}, headers)
    await eventually(async () => {
      const { body } = await getJson(`${apiUrl}/v1/runs?status=cancelled&function=waits-orders&limit=1000`, headers)
      return body.data.some((r: any) => r.run_id === run.run_id) ? true : undefined
    }, timeoutMs)
  })
}
