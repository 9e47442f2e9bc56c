// Flow control, distributed: roles as separate processes on the test Kafka and ClickHouse (the shared
// suite, tests/functions/flow-suite.ts), then kill -9 of both runners while they hold throttled runs
// waiting to start, a debounce and a batch, replaced with empty data dirs: the queues, debounces and
// batches come back from the runner's Kafka changelog, and every event runs once.
import t from 'tap'
import { join } from 'node:path'
import { ROOT, tempDir } from '../helpers/server.ts'
import { checkFlowRecovered, flowSuite, holdFlowRuns, type FlowTarget } from '../functions/flow-suite.ts'
import { auth, functionsCluster } from './cluster.ts'

t.setTimeout(480_000)
const stepLog = join(await tempDir(), 'steps.log')
const fixture = join(ROOT, 'tests/functions/fixtures/flow.ts')
const cluster = await functionsCluster(t, 'flow', fixture, 10, { SLUICE_TEST_STEP_LOG: stepLog })
const { api, ingest, eventKey } = cluster
const target: FlowTarget = { ingestUrl: ingest.url, eventKey, apiUrl: api.url, headers: auth, stepLog }

t.test('the suite, distributed', async (t) => flowSuite(t, () => target, 60_000))

t.test('kill -9 of both runners: queued, debounced and batched runs come back from the changelog', async (t) => {
  const held = await holdFlowRuns(ingest.url, eventKey, stepLog, 60_000)
  await Promise.all(cluster.runners.map((r) => r.kill('SIGKILL')))
  await checkFlowRecovered(
    t,
    held,
    async () => {
      cluster.runners = await Promise.all([cluster.startRunner(), cluster.startRunner()])
      return { url: api.url, headers: auth }
    },
    120_000,
  )
})
