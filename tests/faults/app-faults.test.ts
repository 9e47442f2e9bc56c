// Network faults between Sluice and an app on Inngest's SDKs (the real npm `inngest` 4.x), in
// embedded mode, where the app is the one thing across a network: every call to the app goes
// through Toxiproxy, which slows it (1 s ± 0.5), resets its connections, then black-holes it, each
// for a while under a steady stream of events. Afterwards every event ran its function exactly once
// and to completion, and a step's body ran again only for a call that failed in flight: per run,
// the extra executions are at most the failed attempts.
import t from 'tap'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Inngest } from 'inngest'
import { serve } from 'inngest/node'
import { eventually, startServer } from '../helpers/server.ts'
import { startToxiproxy } from '../infra/toxiproxy.ts'
import { api, SIGNING_KEY } from '../sdk/js-suite.ts'

t.setTimeout(300_000)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test('calls to an app through latency, resets and a black hole run every step once', async (t) => {
  const sluice = await startServer({ mode: 'start', flags: { signingKey: SIGNING_KEY } })
  t.teardown(() => sluice.stop())
  const toxiproxy = await startToxiproxy()
  t.teardown(() => toxiproxy.stop())

  // Each step's body counts its executions, by run and step.
  const executions = new Map<string, number>()
  const ran = (runId: string, step: string) => {
    const key = `${runId}/${step}`
    executions.set(key, (executions.get(key) ?? 0) + 1)
  }
  const client = new Inngest({ id: 'faulty', isDev: false, baseUrl: sluice.url, signingKey: SIGNING_KEY })
  const chain = client.createFunction(
    { id: 'chain', retries: 20, triggers: [{ event: 'faults/chain' }] },
    async ({ event, step, runId }) => {
      const a = await step.run('a', () => {
        ran(runId, 'a')
        return (event.data as { n: number }).n
      })
      const b = await step.run('b', () => {
        ran(runId, 'b')
        return a * 2
      })
      await step.sleep('pause', '1s')
      const c = await step.run('c', () => {
        ran(runId, 'c')
        return b + 1
      })
      return { n: a, result: c }
    },
  )
  const server: Server = createServer(serve({ client, functions: [chain] }) as never)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const app = await toxiproxy.proxy('app', `127.0.0.1:${(server.address() as AddressInfo).port}`)

  const synced = await api(sluice, '/v1/apps', {
    method: 'POST',
    body: JSON.stringify({ url: `http://${app.listen}/api/inngest` }),
  })
  t.equal(synced.status, 200, 'the app synced through the proxy')
  const { key } = (await api(sluice, '/v1/keys', { method: 'POST', body: JSON.stringify({ env: 'production' }) })).body
    .data

  let sent = 0
  let sending = true
  const sender = (async () => {
    while (sending) {
      const n = sent++
      const response = await fetch(`${sluice.url}/e/${key}`, {
        method: 'POST',
        body: JSON.stringify({ name: 'faults/chain', data: { n } }),
      })
      if (response.status !== 200) throw new Error(`send ${n}: ${response.status}`)
      await sleep(400)
    }
  })()
  const toxics: Array<[string, Record<string, number>, number]> = [
    ['latency', { latency: 1000, jitter: 500 }, 8000],
    ['reset_peer', { timeout: 0 }, 8000],
    ['timeout', { timeout: 5000 }, 12_000],
  ]
  for (const [type, attributes, ms] of toxics) {
    await sleep(3000)
    const added = await Promise.all(
      (['upstream', 'downstream'] as const).map((stream) =>
        app.proxy.addToxic({ name: `${type}-${stream}`, type: type as never, stream, toxicity: 1, attributes }),
      ),
    )
    t.comment(`${type} on the app's connections for ${ms / 1000} s (${sent} events sent so far)`)
    await sleep(ms)
    await Promise.all(added.map((toxic) => toxic.remove()))
  }
  await sleep(3000)
  sending = false
  await sender
  t.comment(`${sent} events sent; waiting for their runs`)

  type Run = { run_id: string; status: string; attempts: number; output: { n: number; result: number } | null }
  const runs = await eventually(
    async () => {
      const page: Run[] = (await api(sluice, '/v1/runs?function=faulty-chain&limit=1000')).body.data
      return page.length === sent && page.every((r) => r.status === 'completed') ? page : undefined
    },
    150_000,
    500,
  ).catch(async () => {
    const page: Run[] = (await api(sluice, '/v1/runs?function=faulty-chain&limit=1000')).body.data
    const statuses = page.reduce<Record<string, number>>(
      (all, r) => ({ ...all, [r.status]: (all[r.status] ?? 0) + 1 }),
      {},
    )
    throw new Error(`${page.length} runs of ${sent} events, by status ${JSON.stringify(statuses)}`)
  })
  t.equal(runs.length, sent, 'one run per event')
  t.same(
    runs.map((r) => r.output?.n).sort((a, b) => a! - b!),
    Array.from({ length: sent }, (_, n) => n),
    "every event's run, none twice",
  )
  t.ok(
    runs.every((r) => r.output!.result === r.output!.n * 2 + 1),
    'each run completed with its steps',
  )
  const retried = runs.filter((r) => r.attempts > 1)
  t.ok(retried.length > 0, `the faults failed calls, which were retried (${retried.length} runs)`)
  const overRun: string[] = []
  let neverRan = 0
  for (const run of runs) {
    const counts = ['a', 'b', 'c'].map((s) => executions.get(`${run.run_id}/${s}`) ?? 0)
    if (counts.some((c) => c === 0)) neverRan++
    const extra = counts.reduce((sum, c) => sum + Math.max(0, c - 1), 0)
    if (extra > run.attempts - 1) overRun.push(`${run.run_id}: ${counts.join('/')} in ${run.attempts} attempts`)
  }
  t.equal(neverRan, 0, 'every step of every run executed')
  t.same(overRun, [], 'a step re-ran only for an attempt that failed in flight')
})
