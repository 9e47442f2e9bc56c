// The suite of an app written with the real npm `inngest` (4.24 or 3.54), unchanged but for where they point,
// synced into Sluice in production (signed, `sluice start`) and run through the Event API: steps,
// parallel steps, sleeps, waits with `if`, invokes, retries, non-retriable failures with onFailure,
// cancelOn, flow control and step.sendEvent, each read back from Sluice's runs API.
import type { Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { eventually, startServer, type TestServer } from '../helpers/server.ts'
import { startJsApp, type JsMajor } from './js-app.ts'

export const SIGNING_KEY = `signkey-prod-${randomBytes(32).toString('hex')}`

export type Run = { run_id: string; status: string; output: unknown; error: { message: string; code?: string } | null }

export async function api(sluice: TestServer, path: string, init: RequestInit = {}) {
  const res = await fetch(`${sluice.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${SIGNING_KEY}`, 'content-type': 'application/json', ...init.headers },
  })
  return { status: res.status, body: await res.json() }
}

/** The function's first run that reached `status` (of those `event_name` started, if given). */
export async function runOf(sluice: TestServer, fn: string, status: string, eventName?: string): Promise<Run> {
  const byName = eventName ? `&event_name=${encodeURIComponent(eventName)}` : ''
  let last: unknown
  return eventually(
    async () => {
      const { body } = await api(sluice, `/v1/runs?function=${fn}${byName}`)
      last = body.data
      return (body.data as Run[]).find((r) => r.status === status)
    },
    20_000,
    100,
  ).catch((err) => {
    throw new Error(`${fn}: no run ${status}; the runs: ${JSON.stringify(last).slice(0, 2000)}`, { cause: err })
  })
}

/** Each major in a test process of its own: two copies of the SDK in one process share its async context. */
export function jsAppSuite(t: Test, major: JsMajor) {
  t.test(`npm inngest ${major}: an app synced in production runs every behaviour`, async (t) => {
    const sluice = await startServer({ mode: 'start', flags: { signingKey: SIGNING_KEY } })
    t.teardown(() => sluice.stop())
    const key = await api(sluice, '/v1/keys', { method: 'POST', body: JSON.stringify({ env: 'production' }) })
    const appId = `js-${major}`
    const app = await startJsApp({
      major,
      appId,
      baseUrl: sluice.url,
      signingKey: SIGNING_KEY,
      eventKey: key.body.data.key,
    })
    t.teardown(() => app.close())

    const synced = await api(sluice, '/v1/apps', { method: 'POST', body: JSON.stringify({ url: app.url }) })
    t.equal(synced.status, 200, 'synced')
    t.equal(synced.body.data.sdk.language, 'js')
    t.match(synced.body.data.sdk.version, major === 'v4' ? /^4\./ : /^3\./)
    const fns = (await api(sluice, '/v1/functions')).body.data as Array<{ id: string; flow_control: unknown }>
    t.same(
      fns.map((f) => f.id).sort(),
      ['cancel', 'fail', 'fail-failure', 'finished', 'flow', 'invoke', 'retry', 'send', 'steps', 'wait'].map(
        (f) => `${appId}-${f}`,
      ),
      "the app's functions, onFailure's among them",
    )
    t.match(fns.find((f) => f.id === `${appId}-flow`)?.flow_control, {
      concurrency: [{ limit: 1, key: 'event.data.user', scope: 'fn' }],
      throttle: { limit: 5, period_ms: 1000 },
    })

    // The SDK's own inngest.send() reaches the Event API with its event key.
    await app.send('sdk/steps', { a: 1, b: 2 })
    await app.send('sdk/order', { id: 'o-1' })
    await app.send('sdk/invoke', {})
    await app.send('sdk/retry', {})
    await app.send('sdk/fail', {})
    await app.send('sdk/long', { id: 'l-1' })
    await app.send('sdk/flow', { user: 'u-1' })
    await app.send('sdk/send', { n: 7 })

    const steps = await runOf(sluice, `${appId}-steps`, 'completed', 'sdk/steps')
    t.same(steps.output, { sum: 6 }, 'steps, parallel steps and a sleep')
    const detail = (await api(sluice, `/v1/runs/${steps.run_id}`)).body.data
    t.same(
      detail.steps.map((s: { name: string }) => s.name),
      ['first', 'second', 'left', 'right', 'nap'],
      'the timeline names the steps as the code does',
    )

    // Another order's approval does not resume this run; its own does.
    await eventually(async () => ((await runOf(sluice, `${appId}-wait`, 'waiting')) ? true : undefined))
    await app.send('sdk/approve', { id: 'o-2', by: 'someone else' })
    await app.send('sdk/approve', { id: 'o-1', by: 'ops' })
    t.same((await runOf(sluice, `${appId}-wait`, 'completed')).output, { by: 'ops' }, 'waitForEvent with if')

    t.same((await runOf(sluice, `${appId}-invoke`, 'completed')).output, { invoked: { sum: 33 } }, 'step.invoke')
    t.same((await runOf(sluice, `${appId}-retry`, 'completed')).output, { attempt: 1 }, 'a step retried')

    const failed = await runOf(sluice, `${appId}-fail`, 'failed')
    t.match(failed.error?.message, /the card was declined/)
    const failure = await runOf(sluice, `${appId}-fail-failure`, 'completed')
    t.match(failure.output, { noted: /the card was declined/ }, 'onFailure ran with inngest/function.failed')

    await eventually(async () => ((await runOf(sluice, `${appId}-cancel`, 'waiting')) ? true : undefined))
    await app.send('sdk/cancel', { id: 'l-1' })
    await runOf(sluice, `${appId}-cancel`, 'cancelled')
    t.pass('cancelOn with if')

    t.same((await runOf(sluice, `${appId}-flow`, 'completed')).output, { user: 'u-1' }, 'a flow-controlled run')
    t.equal((await runOf(sluice, `${appId}-send`, 'completed')).output, 'sent')
    const emitted = await eventually(async () => {
      const { body } = await api(sluice, '/v1/events?name=sdk/emitted')
      return body.data[0]
    })
    t.same(emitted.data, { from: 7 }, 'step.sendEvent')
    const heard = await eventually(async () => {
      const { body } = await api(sluice, `/v1/runs?function=${appId}-finished&status=completed`)
      return (body.data as Run[]).length === 2 ? body.data : undefined
    })
    t.same(
      (heard as Run[]).map((r) => r.output).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
      [{ result: { sum: 33 } }, { result: { sum: 6 } }],
      'inngest/function.finished for each run of steps (the invoked one too)',
    )
  })
}
