// Apps on the Inngest SDKs, distributed: api + ingest, dedup + sink, the router and two runners as
// processes on the test Kafka and ClickHouse; the runners make the calls. Every behaviour of
// tests/sdk/app-suite.ts with the Python, Go and npm inngest 3.x apps; and with a real npm inngest 4.x
// app, a runner killed with kill -9 in the middle of a call loses no run, and no step whose result
// was memoised runs again (only the call in flight may be repeated).
import t from 'tap'
import type { AddressInfo } from 'node:net'
import { Inngest } from 'inngest'
import { createServer } from 'inngest/node'
import { randomBytes } from 'node:crypto'
import { eventually, getJson, postJson } from '../helpers/server.ts'
import { sdkAvailable, startSdkApp, type SdkKind } from '../helpers/sdk-app.ts'
import { appSuite } from '../sdk/app-suite.ts'
import { distributedEnv, startNode, type Node } from './cluster.ts'

t.setTimeout(480_000)
const RUNS = 6
// Python's and Go's SDKs take a signing key of Inngest's form only.
const SIGNING_KEY = `signkey-prod-${randomBytes(32).toString('hex')}`
const auth = { authorization: `Bearer ${SIGNING_KEY}` }
const env = { ...distributedEnv('sdk_apps'), SLUICE_SIGNING_KEY: SIGNING_KEY }
const nodes: Node[] = []
t.teardown(() => Promise.all(nodes.map((n) => n.kill('SIGKILL'))))
const start = async (roles: string[]) => {
  const node = await startNode(roles, env, [], 'start', { startTimeoutMs: 120_000 })
  nodes.push(node)
  return node
}
const [front] = await Promise.all([start(['api', 'ingest']), start(['dedup', 'sink']), start(['router'])])
const runners = await Promise.all([start(['runner']), start(['runner'])])
const eventKey: string = (await postJson(`${front.url}/v1/keys`, { env: 'production' }, auth)).body.data.key

for (const kind of ['python', 'go', 'ts-v3'] as SdkKind[])
  t.test(`${kind}: every behaviour, distributed`, { skip: !sdkAvailable(kind) && 'not provisioned' }, async (t) => {
    const app = await startSdkApp(kind, { sluiceUrl: front.url, dev: false, signingKey: SIGNING_KEY, eventKey })
    t.teardown(() => app.stop())
    await appSuite(t, {
      url: front.url,
      signingKey: SIGNING_KEY,
      eventKey,
      appId: app.appId,
      appUrl: app.url,
      onFailure: kind !== 'go',
    })
  })

t.test('runners call the app; kill -9 of one mid-call re-runs no memoised step', async (t) => {
  const executions = new Map<string, number>()
  const count = (runId: string, step: string) => {
    const key = `${runId}/${step}`
    executions.set(key, (executions.get(key) ?? 0) + 1)
  }
  const inngest = new Inngest({ id: 'dist', isDev: false, baseUrl: front.url, signingKey: SIGNING_KEY })
  const fn = inngest.createFunction({ id: 'slow', triggers: { event: 'dist/go' } }, async ({ event, step, runId }) => {
    const a = await step.run('first', () => {
      count(runId, 'first')
      return event.data.n as number
    })
    const b = await step.run('slow', async () => {
      count(runId, 'slow')
      await new Promise((r) => setTimeout(r, 1500))
      return a * 2
    })
    return step.run('last', () => {
      count(runId, 'last')
      return { n: a, doubled: b }
    })
  })
  const app = createServer({ client: inngest, functions: [fn] })
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve))
  t.teardown(() => app.close())
  const url = `http://127.0.0.1:${(app.address() as AddressInfo).port}/api/inngest`

  const synced = await postJson(`${front.url}/v1/apps`, { url }, auth)
  t.equal(synced.status, 200, JSON.stringify(synced.body))
  for (let n = 1; n <= RUNS; n++)
    await eventually(
      async () =>
        (await postJson(`${front.url}/e/${eventKey}`, { name: 'dist/go', data: { n } })).status === 200
          ? true
          : undefined,
      60_000,
      100,
    )
  // Once some slow step is in flight, one runner dies with it.
  await eventually(
    async () => ([...executions.keys()].some((k) => k.endsWith('/slow')) ? true : undefined),
    120_000,
    20,
  )
  await runners[0].kill('SIGKILL')

  const runs = await eventually(
    async () => {
      const list = (await getJson(`${front.url}/v1/runs?function=dist-slow`, auth)).body.data as Array<{
        run_id: string
        status: string
        output: { n: number; doubled: number }
      }>
      return list.length === RUNS && list.every((r) => r.status === 'completed') ? list : undefined
    },
    180_000,
    250,
  )
  t.same(runs.map((r) => r.output.n).sort(), [1, 2, 3, 4, 5, 6], 'every run completed once')
  for (const r of runs) t.equal(r.output.doubled, r.output.n * 2)
  for (const r of runs) {
    t.equal(executions.get(`${r.run_id}/first`), 1, `${r.run_id}: the memoised first step ran once`)
    t.ok((executions.get(`${r.run_id}/slow`) ?? 0) <= 2, `${r.run_id}: the step in flight ran at most twice`)
    t.equal(executions.get(`${r.run_id}/last`), 1, `${r.run_id}: the last step ran once`)
  }
})
