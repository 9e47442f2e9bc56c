// kill -9 of an embedded server holding throttled runs waiting to start, a debounce waiting for its
// quiet period and a batch waiting for its timeout: after a restart on its data dir, every event
// runs once (a step in flight at the kill may run twice), each batched event in exactly one batch,
// and the debounce runs once, with its last event.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { eventually, getJson, postJson, removeDir, ROOT, spawnServer, tempDir } from '../helpers/server.ts'

t.setTimeout(180_000)
const dir = await tempDir()
const stepLog = join(dir, 'steps.log')
const args = [
  'dev',
  '--port',
  '0',
  '--data-dir',
  join(dir, 'sluice'),
  '--functions',
  join(ROOT, 'tests/functions/fixtures/flow.ts'),
]
const env = { SLUICE_TEST_STEP_LOG: stepLog }
const notes = async (fn: string) =>
  (await readFile(stepLog, 'utf8').catch(() => ''))
    .split('\n')
    .filter((l) => l.startsWith(`${fn} `))
    .map((l) => JSON.parse(l.split(' ')[2]))

t.test('throttled, debounced and batched runs survive kill -9: each event once, in one batch, none lost', async (t) => {
  const first = await spawnServer(args, env)
  t.teardown(() => {
    first.child.kill('SIGKILL')
  })
  const send = async (url: string, name: string, data: object[]) =>
    (
      await postJson(
        `${url}/e/dev`,
        data.map((d) => ({ name, data: d })),
      )
    ).body.ids as string[]
  const throttled = await send(
    first.url,
    'flow/throttled',
    Array.from({ length: 8 }, (_, i) => ({ n: `t${i}` })),
  )
  const batched = await send(
    first.url,
    'flow/batched',
    Array.from({ length: 5 }, (_, i) => ({ n: `b${i}` })),
  )
  const debounced = await send(first.url, 'flow/debounced', [{ k: 'crash', n: 'd1' }])
  await new Promise((r) => setTimeout(r, 300))
  debounced.push(...(await send(first.url, 'flow/debounced', [{ k: 'crash', n: 'd2' }])))
  await eventually(async () => ((await notes('throttled')).length >= 2 ? true : undefined), 20_000)
  first.child.kill('SIGKILL')
  t.equal(await first.stopped, null, 'killed')
  const startedBefore = (await notes('throttled')).length
  t.ok(startedBefore < 8, `killed with throttled runs still waiting (${startedBefore} of 8 started)`)

  const second = await spawnServer(args, env)
  t.teardown(async () => {
    second.child.kill('SIGTERM')
    await second.stopped
    await removeDir(dir)
  })
  const runsOf = async (id: string, fn: string) =>
    ((await getJson(`${second.url}/v1/events/${id}/runs`)).body.data ?? []).filter((r: any) => r.function_id === fn)
  const completed = (ids: string[], fn: string, count: number) =>
    eventually(
      async () => {
        const runs = new Map<string, any>()
        for (const id of ids) for (const r of await runsOf(id, fn)) if (r.status === 'completed') runs.set(r.run_id, r)
        return runs.size >= count ? [...runs.values()] : undefined
      },
      60_000,
      250,
    )
  const throttledRuns = await completed(throttled, 'flow-throttled', 8)
  t.equal(throttledRuns.length, 8, 'every throttled event ran, once')
  const started = await notes('throttled')
  for (let i = 0; i < 8; i++) {
    const times = started.filter((n) => n === `t${i}`).length
    t.ok(times >= 1 && times <= 2, `t${i} started ${times} time(s)`)
  }
  const batches = await completed(batched, 'flow-batched', 2)
  const inBatches = batches.flatMap((r) => r.output as string[])
  t.same([...inBatches].sort(), ['b0', 'b1', 'b2', 'b3', 'b4'], 'each batched event in exactly one batch')
  const [debounce] = await completed(debounced, 'flow-debounced', 1)
  t.equal(debounce.output, 'd2', 'the debounce ran with its last event')
  await new Promise((r) => setTimeout(r, 2000))
  t.equal((await notes('debounced')).filter((n) => n === 'd1' || n === 'd2').length, 1, 'once')
})
