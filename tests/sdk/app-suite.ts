// The behaviours of issue 49 against an app of tests/sdk/apps (Python, Go; the same function set in
// each), synced into a Sluice in production (signed) and driven through the Event API: steps,
// parallel steps, sleeps, waits with `if`, invokes, retries, non-retriable failures, onFailure, flow
// control (concurrency, throttle, rate limit, debounce, batches, idempotency), cancel, cron and
// sendEvent, each read back from Sluice's runs API.
import type { Test } from 'tap'
import { eventually } from '../helpers/server.ts'

export interface SuiteTarget {
  /** Sluice's URL, its signing key and an event key. */
  url: string
  signingKey: string
  eventKey: string
  appId: string
  appUrl: string
  /** The SDK has onFailure (inngestgo v0.16.0 has none). */
  onFailure: boolean
}

type Run = { run_id: string; status: string; attempts: number; output: any; error: { message: string } | null }

export async function appSuite(t: Test, s: SuiteTarget): Promise<void> {
  const headers = { authorization: `Bearer ${s.signingKey}`, 'content-type': 'application/json' }
  const api = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${s.url}${path}`, { ...init, headers })
    return { status: res.status, body: await res.json() }
  }
  const send = async (name: string, data: Record<string, unknown>) => {
    const res = await fetch(`${s.url}/e/${s.eventKey}`, { method: 'POST', body: JSON.stringify({ name, data }) })
    if (res.status !== 200) throw new Error(`send ${name}: HTTP ${res.status}`)
  }
  const fn = (id: string) => `${s.appId}-${id}`
  /** A function's runs; those of its own trigger (`sdk/<id>`), not those another run invoked. */
  const runs = async (id: string, eventName = `sdk/${id}`): Promise<Run[]> =>
    (await api(`/v1/runs?function=${fn(id)}&event_name=${encodeURIComponent(eventName)}`)).body.data
  const runOf = (id: string, status: string, eventName?: string) =>
    eventually(async () => (await runs(id, eventName)).find((r) => r.status === status), 30_000, 100)

  const synced = await api('/v1/apps', { method: 'POST', body: JSON.stringify({ url: s.appUrl }) })
  t.equal(synced.status, 200, `synced: ${JSON.stringify(synced.body).slice(0, 300)}`)
  const functions = (await api('/v1/functions')).body.data as Array<{ id: string; triggers: any[]; flow_control: any }>
  const byId = (id: string) => functions.find((f) => f.id === fn(id))
  for (const id of ['steps', 'parallel', 'sleep', 'wait', 'invoke', 'fail', 'retry', 'batch', 'cancel', 'cron', 'send'])
    t.ok(byId(id), `${fn(id)} registered`)
  t.same(byId('cron')?.triggers, [{ cron: 'TZ=Europe/Paris 0 3 * * *' }], 'a cron trigger with its time zone')
  t.match(byId('concurrency')?.flow_control, { concurrency: [{ limit: 1, key: 'event.data.key' }] })
  t.match(byId('throttle')?.flow_control, { throttle: { limit: 1, period_ms: 5000, key: 'event.data.key' } })
  t.match(byId('batch')?.flow_control, { batch_events: { max_size: 3, timeout_ms: 2000 } })

  await send('sdk/steps', { a: 1, b: 2 })
  await send('sdk/parallel', { a: 1, b: 2 })
  await send('sdk/sleep', { id: 's-1' })
  await send('sdk/wait', { id: 'w-1' })
  await send('sdk/invoke', { a: 2, b: 3 })
  await send('sdk/fail', { id: 'f-1' })
  await send('sdk/retry', {})
  await send('sdk/concurrency', { id: 'c-1', key: 'k' })
  await send('sdk/throttle', { id: 't-1', key: 'k' })
  // A burst, 200 ms apart: across Kafka's partitions they may reach the gate in another order (the
  // last accepted wins, runner/gate.ts), and the whole burst stays well inside the 2 s period.
  for (const id of ['d-1', 'd-2', 'd-3']) {
    await send('sdk/debounce', { id, key: 'k' })
    await new Promise((r) => setTimeout(r, 200))
  }
  for (const id of ['i-1', 'i-2']) await send('sdk/idempotency', { id, key: 'same' })
  for (const id of ['b-1', 'b-2', 'b-3']) await send('sdk/batch', { id })
  await send('sdk/cancellable', { id: 'x-1' })
  await send('sdk/send', { id: 'e-1' })
  if (s.onFailure) await send('sdk/on-failure', { id: 'o-1' })

  t.same((await runOf('steps', 'completed')).output, { sum: 3 }, 'steps')
  t.same((await runOf('parallel', 'completed')).output, { sum: 8 }, 'parallel steps')
  t.same((await runOf('sleep', 'completed')).output, { woke: 's-1' }, 'a sleep')
  await runOf('wait', 'waiting')
  await send('sdk/approve', { id: 'w-2' })
  await send('sdk/approve', { id: 'w-1' })
  t.same((await runOf('wait', 'completed')).output, { approved: 'w-1' }, 'waitForEvent with if')
  t.same((await runOf('invoke', 'completed')).output, { invoked: { sum: 5 } }, 'invoke')
  const failed = await runOf('fail', 'failed')
  t.match(failed.error?.message, /no retry for f-1/, 'a non-retriable error')
  t.equal(failed.attempts, 1, 'ends the run at once')
  t.match((await runOf('retry', 'completed')).output, { flaky: /attempt 1/ }, 'a step retried')
  t.same((await runOf('concurrency', 'completed')).output, { id: 'c-1' }, 'concurrency')
  t.same((await runOf('throttle', 'completed')).output, { id: 't-1' }, 'throttle')
  await runOf('debounce', 'completed')
  const debounced = (await runs('debounce')).map((r) => ({ status: r.status, output: r.output }))
  t.same(debounced, [{ status: 'completed', output: { id: 'd-3' } }], 'debounce: one run, the last event')
  const idempotent = await eventually(async () => {
    const list = await runs('idempotency')
    return list.some((r) => r.status === 'completed') ? list : undefined
  })
  t.equal(idempotent.filter((r) => r.status !== 'skipped').length, 1, 'idempotency: one run per key')
  const batch = (await runOf('batch', 'completed')).output
  t.same({ ...batch, ids: [...batch.ids].sort() }, { count: 3, ids: ['b-1', 'b-2', 'b-3'] }, 'a batch of the three')
  await runOf('cancel', 'waiting', 'sdk/cancellable')
  await send('sdk/cancel', { id: 'x-1' })
  await runOf('cancel', 'cancelled', 'sdk/cancellable')
  t.pass('cancel with if')
  t.match((await runOf('send', 'completed')).output, { sent: 'e-1' }, 'sendEvent')
  const sent = await eventually(async () => (await api('/v1/events?name=sdk/sent')).body.data[0])
  t.same(sent.data, { id: 'e-1' }, 'the sent event is stored')
  if (s.onFailure) {
    await runOf('on-failure', 'failed')
    const handler = functions.find((f) => f.triggers.some((tr: any) => tr.event === 'sluice/function.failed'))
    t.ok(handler, 'onFailure registered as a function of sluice/function.failed')
    const handled = await eventually(async () =>
      ((await api(`/v1/runs?function=${handler!.id}`)).body.data as Run[]).find((r) => r.status === 'completed'),
    )
    t.same(handled.output, { failed: 'o-1' }, 'onFailure ran with the failed event')
  }
}
