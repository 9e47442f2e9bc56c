// kill -9 of an embedded server holding throttled runs waiting to start, a debounce waiting for its
// quiet period and a batch waiting for its timeout: after a restart on its data dir, every event
// runs once (a step in flight at the kill may run twice), each batched event in exactly one batch,
// and the debounce runs once, with its last event. (Distributed: tests/distributed/flow.test.ts.)
import t from 'tap'
import { join } from 'node:path'
import { removeDir, ROOT, spawnServer, tempDir } from '../helpers/server.ts'
import { checkFlowRecovered, holdFlowRuns } from './flow-suite.ts'

t.setTimeout(180_000)
const dir = await tempDir()
const stepLog = join(dir, 'steps.log')
const args = ['dev', '--port', '0', '--data-dir', join(dir, 'sluice')]
args.push('--functions', join(ROOT, 'tests/functions/fixtures/flow.ts'))
const env = { SLUICE_TEST_STEP_LOG: stepLog }

t.test('throttled, debounced and batched runs survive kill -9: each event once, in one batch, none lost', async (t) => {
  const first = await spawnServer(args, env)
  t.teardown(() => {
    first.child.kill('SIGKILL')
  })
  const held = await holdFlowRuns(first.url, 'dev', stepLog)
  first.child.kill('SIGKILL')
  t.equal(await first.stopped, null, 'killed')
  await checkFlowRecovered(t, held, async () => {
    const second = await spawnServer(args, env)
    t.teardown(async () => {
      second.child.kill('SIGTERM')
      await second.stopped
      await removeDir(dir)
    })
    return { url: second.url, headers: {} }
  })
})
