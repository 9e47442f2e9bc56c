// kill -9 in the middle of a multi-step run: after a restart on the same data directory the run
// completes, no step has executed more than twice, and the event it sent is delivered once.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { eventually, getJson, removeDir, ROOT, spawnServer, tempDir } from '../helpers/server.ts'
import { finishedRuns, runsOf, sendEvent } from './fixtures/rest.ts'

const dataDir = await tempDir()
const stepLog = join(dataDir, 'steps.log')
const args = [
  'dev',
  '--port',
  '0',
  '--data-dir',
  join(dataDir, 'sluice'),
  '--functions',
  join(ROOT, 'tests/functions/fixtures/crash.ts'),
]
const env = { SLUICE_TEST_STEP_LOG: stepLog, SLUICE_LOG_LEVEL: 'info' }
const lines = async () => (await readFile(stepLog, 'utf8').catch(() => '')).split('\n').filter(Boolean)

t.test(
  'a run killed with SIGKILL mid-step completes after a restart, each step at most twice, its sent event once',
  async (t) => {
    const first = await spawnServer(args, env)
    t.teardown(() => {
      first.child.kill('SIGKILL')
    })
    const eventId = await sendEvent(first.url, { name: 'test/crash', data: {} })
    await eventually(async () => ((await lines()).includes(`start step-4 ${eventId}`) ? true : undefined), 15_000)
    first.child.kill('SIGKILL')
    t.equal(await first.stopped, null, 'killed, not exited')
    t.notOk(
      (await lines()).some((l) => l.startsWith('start step-5')),
      'killed before the last step',
    )

    const second = await spawnServer(args, env)
    t.teardown(async () => {
      second.child.kill('SIGTERM')
      await second.stopped
      await removeDir(dataDir)
    })
    const [run] = await finishedRuns(second.url, eventId, 1, 20_000)
    t.equal(run.status, 'completed')
    t.same(run.output.done, [1, 2, 3, 4, 5])
    t.same(
      run.steps.map((s: any) => s.id),
      ['step-1', 'step-2', 'announce', 'step-3', 'step-4', 'step-5'],
    )

    const executed = await lines()
    for (const name of ['step-1', 'step-2', 'step-3', 'step-4', 'step-5']) {
      const times = executed.filter((l) => l === `start ${name} ${eventId}`).length
      t.ok(times >= 1 && times <= 2, `${name} executed ${times} time(s)`)
    }
    t.equal(
      executed.filter((l) => l === `start step-4 ${eventId}`).length,
      2,
      'the step in flight at the kill ran again',
    )

    const [sentId] = run.output.announced
    const announcedRuns = await finishedRuns(second.url, sentId)
    t.equal(announcedRuns.length, 1)
    t.equal(announcedRuns[0].status, 'completed')
    t.equal(executed.filter((l) => l === `received ${eventId}`).length, 1, 'the sent event was handled once')
    const events = (await getJson(`${second.url}/v1/events?name=test/crash.announced&limit=1000`)).body.data
    t.equal(events.filter((e: any) => e.data.from === eventId).length, 1, 'one event sent')
    t.equal((await runsOf(second.url, 'function=crash-announced')).length, 1)
  },
)
