// An env-scoped concurrency limit on an embedded server (tests/functions/flow-env-scope-suite.ts): the
// two functions' schedulers share the process's slots, and a slot one frees wakes the other.
import t from 'tap'
import { join } from 'node:path'
import { ROOT, startServer, tempDir } from '../helpers/server.ts'
import { envScopeSuite } from './flow-env-scope-suite.ts'

const stepLog = join(await tempDir(), 'steps.log')
process.env.SLUICE_TEST_STEP_LOG = stepLog
const server = await startServer({ flags: { functionsFile: `${ROOT}tests/functions/fixtures/flow-env-scope.ts` } })
t.teardown(() => server.stop())
envScopeSuite(t, { ingestUrl: server.url, eventKey: 'dev', stepLog, runners: 1 }, 30_000)
