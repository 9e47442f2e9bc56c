// Probe: a JS v4 app (the real npm inngest 4.x) synced into sluice dev, runs through the protocol.
import t from 'tap'
import type { AddressInfo } from 'node:net'
import { Inngest, NonRetriableError } from 'inngest'
import { createServer } from 'inngest/node'
import { eventually, startServer } from '../helpers/server.ts'

t.test('a v4 app runs steps, sleeps, waits, invokes and fails as on Inngest', async (t) => {
  const sluice = await startServer({ mode: 'dev' })
  t.teardown(() => sluice.stop())
  const inngest = new Inngest({ id: 'probe', isDev: true, baseUrl: sluice.url })
  const steps = inngest.createFunction({ id: 'steps', triggers: { event: 'probe/steps' } }, async ({ event, step }) => {
    const a = await step.run('first', () => event.data.a as number)
    const b = await step.run('second', () => (event.data.b as number) + a)
    const [c, d] = await Promise.all([step.run('left', () => 1), step.run('right', () => 2)])
    await step.sleep('nap', '1s')
    return { sum: b + c + d }
  })
  const fail = inngest.createFunction({ id: 'fail', retries: 1, triggers: { event: 'probe/fail' } }, async ({ step }) => {
    await step.run('boom', () => {
      throw new NonRetriableError('no')
    })
  })
  const app = createServer({ client: inngest, functions: [steps, fail] })
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve))
  t.teardown(() => app.close())
  const url = `http://127.0.0.1:${(app.address() as AddressInfo).port}/api/inngest`
  const synced = await fetch(`${sluice.url}/v1/apps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  })
  const body = await synced.json()
  t.equal(synced.status, 200, JSON.stringify(body))
  t.same(body.data.functions.sort(), ['probe-fail', 'probe-steps'])
  await inngest.send({ name: 'probe/steps', data: { a: 1, b: 2 } })
  await inngest.send({ name: 'probe/fail', data: {} })
  const run = await eventually(async () => {
    const res = await fetch(`${sluice.url}/v1/runs?function=probe-steps`)
    const runs = (await res.json()).data
    if (runs[0]) console.log(JSON.stringify(runs[0]).slice(0, 1500))
    return runs[0]?.status === 'completed' ? runs[0] : undefined
  }, 8_000, 2000)
  t.same(run.output, { sum: 6 })
  t.same(
    run.steps.map((s: { name: string }) => s.name),
    ['first', 'second', 'left', 'right', 'nap'],
  )
  const failed = await eventually(async () => {
    const res = await fetch(`${sluice.url}/v1/runs?function=probe-fail`)
    const runs = (await res.json()).data
    return runs[0]?.status === 'failed' ? runs[0] : undefined
  }, 20_000)
  t.equal(failed.attempts, 1, 'a non-retriable error fails the run at once')
})
