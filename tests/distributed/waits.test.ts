// Functions that wait, distributed: roles as separate processes on the test Kafka and ClickHouse
// (the shared suite, tests/functions/waits-suite.ts), then kill -9 of both runners (holding sleeping
// and waiting runs and the cron schedule) and of the router (holding the open waits), replaced with
// empty data dirs: their state comes back from Kafka changelogs, every run resumes once, and no cron
// tick is lost or run twice.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { eventually, getJson, postJson, ROOT, tempDir } from '../helpers/server.ts'
import { waitsSuite, type WaitsTarget } from '../functions/waits-suite.ts'
import { auth, functionsCluster } from './cluster.ts'

/** A cron tick's line in the step log: its ISO time (a sleeper's `before <ULID>` may end in Z too). */
const isTick = (line: string) => /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(line)

t.setTimeout(480_000)
const stepLog = join(await tempDir(), 'steps.log')
const fixture = join(ROOT, 'tests/functions/fixtures/waits-crash.ts')
const cluster = await functionsCluster(t, 'waits', fixture, 7, { SLUICE_TEST_STEP_LOG: stepLog })
const { api, ingest } = cluster
const rest = (path: string) => getJson(`${api.url}${path}`, auth)
const allRuns = async (fn: string) => {
  const runs: Array<{ event_id: string }> = []
  for (let cursor = ''; ; ) {
    const page = (await rest(`/v1/runs?function=${fn}&limit=100${cursor && `&cursor=${cursor}`}`)).body
    runs.push(...page.data)
    if (!page.metadata.cursor) return runs
    cursor = page.metadata.cursor
  }
}
const target: WaitsTarget = { ingestUrl: ingest.url, eventKey: cluster.eventKey, apiUrl: api.url, headers: auth }

t.test('the suite, distributed', async (t) => waitsSuite(t, () => target, 60_000))

t.test('kill -9 of both runners and the router: every waiting run resumes once, no tick lost or doubled', async (t) => {
  const lines = async () => (await readFile(stepLog, 'utf8').catch(() => '')).split('\n').filter(Boolean)
  const send = async (name: string, data: object) =>
    (await postJson(`${ingest.url}/e/${target.eventKey}`, { name, data })).body.ids[0] as string
  const statusOf = async (eventId: string) => (await rest(`/v1/events/${eventId}/runs`)).body.data?.[0]?.status
  const sleepers = [await send('test/sleep', { sleep: '10s' }), await send('test/sleep', { sleep: '12s' })]
  const orders = ['failover-1', 'failover-2', 'failover-3']
  const waiting = await Promise.all(orders.map((order) => send('test/ordered', { order })))
  for (const id of [...sleepers, ...waiting])
    await eventually(async () => ((await statusOf(id)) === 'waiting' ? true : undefined), 60_000, 250)
  await Promise.all([cluster.router.kill('SIGKILL'), ...cluster.runners.map((r) => r.kill('SIGKILL'))])
  const killedAt = Date.now()
  // Replacements on empty data dirs: what the killed ones held is restored from the changelogs.
  ;[cluster.router, ...cluster.runners] = await Promise.all([
    cluster.start(['router']),
    cluster.startRunner(),
    cluster.startRunner(),
  ])
  const restartedAt = Date.now()
  t.ok(restartedAt - killedAt < 60_000, `replaced within the cron catch-up (${restartedAt - killedAt} ms)`)
  for (const order of orders) await send('test/paid', { order, amount: 7 })
  for (const id of [...sleepers, ...waiting])
    await eventually(async () => ((await statusOf(id)) === 'completed' ? true : undefined), 120_000, 250)
  await new Promise((r) => setTimeout(r, 5_000))

  const log = await lines()
  for (const id of sleepers) {
    t.equal(log.filter((l) => l === `before ${id}`).length, 1, 'the step before the sleep ran once')
    t.equal(log.filter((l) => l === `after ${id}`).length, 1, 'the step after the sleep ran once')
  }
  for (const order of orders)
    t.equal(log.filter((l) => l === `ship ${order} paid`).length, 1, `${order} resumed by its payment, once`)
  // Steps run at least once: a tick whose step was in flight when its runner was killed may run its
  // step a second time (docs/functions.md), never a tick sent twice, and none lost.
  const runs = log.filter((l) => isTick(l)).map((l) => Date.parse(l))
  const ticks = [...new Set(runs)].sort((a, b) => a - b)
  const twice = ticks.filter((at) => runs.filter((r) => r === at).length > 1)
  t.ok(
    twice.every((at) => at > killedAt - 10_000 && at <= killedAt),
    `only a tick in flight at the kill ran its step twice (${twice.map((at) => new Date(at).toISOString())})`,
  )
  t.ok(
    ticks.every((at) => runs.filter((r) => r === at).length <= 2),
    'no step ran more than twice',
  )
  // The run store lags the step log by its sink's batching.
  const tickRuns = await eventually(
    async () => {
      const runs = await allRuns('cron-tick')
      return runs.length >= ticks.length ? runs : undefined
    },
    30_000,
    500,
  )
  t.equal(new Set(tickRuns.map((r) => r.event_id)).size, tickRuns.length, 'one run per tick')
  t.ok(
    ticks.some((at) => at > killedAt && at < restartedAt),
    'ticks due while no runner ran late',
  )
  const gaps = ticks.slice(1).filter((at, i) => at - ticks[i] !== 2000)
  t.same(gaps, [], 'no tick lost, from the first to the last')
})
