// Flow control, distributed: roles as separate processes on the test Kafka and ClickHouse (the shared
// suite, tests/functions/flow-suite.ts), then kill -9 of both runners while they hold throttled runs
// waiting to start, a debounce and a batch, replaced with empty data dirs: the queues, debounces and
// batches come back from the runner's Kafka changelog, and every event runs once.
import t from 'tap'
import { join } from 'node:path'
import { eventually, getJson, postJson, ROOT, tempDir } from '../helpers/server.ts'
import { checkFlowRecovered, flowSuite, holdFlowRuns, type FlowTarget } from '../functions/flow-suite.ts'
import { distributedEnv, startNode, auth, type Node } from './cluster.ts'

t.setTimeout(480_000)
const stepLog = join(await tempDir(), 'steps.log')
const env = { ...distributedEnv('flow'), SLUICE_TEST_STEP_LOG: stepLog }
const functions = ['--functions', join(ROOT, 'tests/functions/fixtures/flow.ts')]
const nodes: Node[] = []
t.teardown(() => Promise.all(nodes.map((n) => n.kill('SIGKILL'))))
const start = async (roles: string[], args: string[] = []) => {
  const node = await startNode(roles, env, args, 'start', { startTimeoutMs: 120_000 })
  nodes.push(node)
  return node
}
const [api, ingest] = await Promise.all([
  start(['api']),
  start(['ingest']),
  start(['dedup', 'sink']),
  start(['router']),
])
let runners = await Promise.all([start(['runner'], functions), start(['runner'], functions)])
await eventually(
  async () => ((await getJson(`${api.url}/v1/functions`, auth)).body.data?.length >= 10 ? true : undefined),
  120_000,
  250,
)
const created = await postJson(`${api.url}/v1/keys`, { env: 'production' }, auth)
const target: FlowTarget = {
  ingestUrl: ingest.url,
  eventKey: created.body.data.key,
  apiUrl: api.url,
  headers: auth,
  stepLog,
}
await eventually(
  async () =>
    (await postJson(`${ingest.url}/e/${target.eventKey}`, { name: 'test/warmup', data: {} })).status === 200
      ? true
      : undefined,
  60_000,
  100,
)

t.test('the suite, distributed', async (t) => flowSuite(t, () => target, 60_000))

t.test('kill -9 of both runners: queued, debounced and batched runs come back from the changelog', async (t) => {
  const held = await holdFlowRuns(ingest.url, target.eventKey, stepLog, 60_000)
  await Promise.all(runners.map((r) => r.kill('SIGKILL')))
  await checkFlowRecovered(
    t,
    held,
    async () => {
      runners = await Promise.all([start(['runner'], functions), start(['runner'], functions)])
      return { url: api.url, headers: auth }
    },
    120_000,
  )
})
