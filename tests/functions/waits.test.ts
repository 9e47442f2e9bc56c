// Functions that wait, on an embedded server (the shared suite: tests/functions/waits-suite.ts).
import t from 'tap'
import { ROOT, startServer } from '../helpers/server.ts'
import { waitsSuite, type WaitsTarget } from './waits-suite.ts'

const server = await startServer({ flags: { functionsFile: `${ROOT}tests/functions/fixtures/waits.ts` } })
t.teardown(() => server.stop())
const target: WaitsTarget = { ingestUrl: server.url, eventKey: 'dev', apiUrl: server.url, headers: {} }
waitsSuite(t, () => target)
