// An env-scoped concurrency limit across runner processes (tests/functions/flow-env-scope-suite.ts):
// two runners on the test Kafka serve two functions sharing `{ limit: 1, key: customer, scope: "env" }`.
// The router keys their runs by the customer, and one consumer group with range assignment gives
// partition i of both topics to one runner, so one process counts every run of a customer.
import t from 'tap'
import { join } from 'node:path'
import { ROOT, tempDir } from '../helpers/server.ts'
import { envScopeSuite } from '../functions/flow-env-scope-suite.ts'
import { functionsCluster } from './cluster.ts'

t.setTimeout(180_000)
const stepLog = join(await tempDir(), 'steps.log')
const fixture = join(ROOT, 'tests/functions/fixtures/flow-env-scope.ts')
const cluster = await functionsCluster(t, 'flowenv', fixture, 2, { SLUICE_TEST_STEP_LOG: stepLog })
envScopeSuite(t, { ingestUrl: cluster.ingest.url, eventKey: cluster.eventKey, stepLog, runners: 2 })
