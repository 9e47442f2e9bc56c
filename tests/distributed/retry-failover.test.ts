// A runner killed (-9) while a retry is parked, and replaced by one with an empty data dir (a pod
// rescheduled onto another node): the retry is not lost. Parked retries and marks live in a
// compacted changelog per function (runner/changelog.ts), restored by the partition's new owner.
// On the default Kafka client (@platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { postJson, getJson, eventually } from '../helpers/server.ts'
import { distributedEnv, startNode, auth, type Node } from './cluster.ts'

t.setTimeout(240_000)

t.test('a retry parked on a runner that is killed runs on its replacement, once', async (t) => {
  const attempts: Array<{ attempt: number; pid: number }> = []
  const notify = createServer((req, res) => {
    const q = new URL(req.url!, 'http://x').searchParams
    attempts.push({ attempt: Number(q.get('attempt')), pid: Number(q.get('pid')) })
    res.end()
  })
  await new Promise<void>((resolve) => notify.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((r) => notify.close(r)))
  const env = {
    ...distributedEnv('retryfo'),
    RF_NOTIFY_URL: `http://127.0.0.1:${(notify.address() as AddressInfo).port}`,
  }
  const functionsFile = fileURLToPath(new URL('./retry-failover-functions.ts', import.meta.url))
  const nodes: Node[] = []
  t.teardown(() => Promise.all(nodes.map((n) => n.kill())))
  const api = await startNode(['api'], env)
  nodes.push(api)
  const [ingest, pipeline, first] = await Promise.all([
    startNode(['ingest'], env),
    startNode(['dedup', 'router', 'sink'], env),
    startNode(['runner'], env, ['--functions', functionsFile]),
  ])
  nodes.push(ingest, pipeline, first)
  const rest = (path: string) => getJson(`${api.url}${path}`, auth)
  await eventually(async () => ((await rest('/v1/functions')).body.data.length === 1 ? true : undefined), 60_000, 250)
  const { data: key } = await fetch(`${api.url}/v1/keys`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ env: 'production' }),
  }).then((r) => r.json())
  await eventually(
    async () =>
      (await postJson(`${ingest.url}/e/${key.key}`, { name: 'rf/job', data: { job: 1 } })).status === 200
        ? true
        : undefined,
    30_000,
    100,
  )

  // Attempt 1 fails and parks the next for ~2 s (±20 %); the park is durable well within 500 ms.
  await eventually(async () => (attempts.some((a) => a.attempt === 1) ? true : undefined), 60_000, 20)
  await new Promise((r) => setTimeout(r, 500))
  await first.kill('SIGKILL')
  t.same(
    attempts.map((a) => a.attempt),
    [0, 1],
    'the killed runner ran attempts 0 and 1 and no more',
  )
  t.ok(
    attempts.every((a) => a.pid === first.child.pid),
    'all on the first runner',
  )

  const second = await startNode(['runner'], env, ['--functions', functionsFile])
  nodes.push(second)
  const run = await eventually(
    async () => {
      const runs = (await rest('/v1/runs?function=failover-flaky')).body.data
      return runs.length === 1 && runs[0].status === 'completed' ? runs[0] : undefined
    },
    120_000,
    250,
  )
  t.same(run.output, { done: 1 })
  t.same(
    attempts.map((a) => a.attempt),
    [0, 1, 2],
    'attempt 2 ran once, on the replacement',
  )
  t.equal(attempts[2].pid, second.child.pid)
})
