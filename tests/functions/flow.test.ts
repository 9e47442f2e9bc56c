// Flow control on an embedded server (the shared suite: tests/functions/flow-suite.ts).
import t from 'tap'
import { join } from 'node:path'
import { ROOT, startServer, tempDir } from '../helpers/server.ts'
import { flowSuite, type FlowTarget } from './flow-suite.ts'

const stepLog = join(await tempDir(), 'steps.log')
process.env.SLUICE_TEST_STEP_LOG = stepLog
const server = await startServer({ flags: { functionsFile: `${ROOT}tests/functions/fixtures/flow.ts` } })
t.teardown(() => server.stop())
const target: FlowTarget = { ingestUrl: server.url, eventKey: 'dev', apiUrl: server.url, headers: {}, stepLog }
flowSuite(t, () => target)
