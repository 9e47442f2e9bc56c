// SIGTERM under load, to an ingest process and then to a dedup process of a distributed cluster
// (real Kafka and ClickHouse): /readyz answers 503 at once, every request accepted before the
// signal is answered 200, every acknowledged event reaches ClickHouse, and the process exits 0
// within its grace period. Then a dedup process killed with -9 is replaced by one that is ready
// within 10 s of its start (no static group membership: the session timeout bounds the wait). On
// the default Kafka client (@platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t, { type Test } from 'tap'
import { createClient } from '@clickhouse/client'
import { getJson, eventually, tempDir, removeDir } from '../helpers/server.ts'
import { testServices } from '../infra/services.ts'
import { distributedEnv, auth } from '../distributed/cluster.ts'
import { spawnSluice, type SluiceProcess } from './sluice-process.ts'

t.setTimeout(420_000)
const GRACE_MS = 20_000
// No delay between the 503 and the listener closing: requests in flight at the signal are in flight
// while the listener closes, and must still be answered.
const env: NodeJS.ProcessEnv = { ...distributedEnv('shutdown'), SLUICE_SHUTDOWN_GRACE_MS: String(GRACE_MS) }
interface Node {
  url: string
  child: SluiceProcess['child']
  stopped: Promise<number | null>
}
const nodes: SluiceProcess[] = []
t.teardown(async () => {
  for (const p of nodes) p.child.kill('SIGKILL')
  await Promise.all(nodes.map((p) => p.exited))
})
// Not cluster.ts's startNode: its 30 s start limit is too short on a loaded shared machine.
const start = async (roles: string[]): Promise<Node> => {
  const dataDir = await tempDir('sluice-node-')
  const p = spawnSluice(
    ['start', ...roles.flatMap((r) => ['--role', r]), '--port', '0', '--ops-port', '0', '--data-dir', dataDir],
    env,
  )
  nodes.push(p)
  void p.exited.then(() => removeDir(dataDir))
  return { url: await p.up(180_000), child: p.child, stopped: p.exited.then((e) => e.code) }
}
const api = await start(['api', 'sink', 'router'])
const [ingestA, ingestB, dedupA, dedupB] = await Promise.all([
  start(['ingest']),
  start(['ingest']),
  start(['transformer', 'dedup']),
  start(['transformer', 'dedup']),
])
const created = await fetch(`${api.url}/v1/keys`, {
  method: 'POST',
  headers: { ...auth, 'content-type': 'application/json' },
  body: '{"env":"production"}',
})
const key = (await created.json()).data.key as string

interface Outcome {
  startedAt: number
  status: number | 'network error'
  /** The error's code, when the answer was one. */
  code?: string
  ids: string[]
}

/** Clients sending single events and batches of 20 to `url` until stopped; every answer is kept. */
function load(url: string, clients = 6) {
  const outcomes: Outcome[] = []
  let running = true
  let n = 0
  const client = async (c: number) => {
    while (running) {
      const size = c % 2 === 0 ? 1 : 20
      const events = Array.from({ length: size }, () => ({ name: 'ops/load', data: { n: ++n } }))
      const startedAt = Date.now()
      try {
        const response = await fetch(`${url}/e/${key}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(size === 1 ? events[0] : events),
        })
        const body = await response.json().catch(() => ({}))
        const ok = response.status === 200
        outcomes.push({ startedAt, status: response.status, code: ok ? undefined : body.code, ids: ok ? body.ids : [] })
      } catch {
        outcomes.push({ startedAt, status: 'network error', ids: [] })
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
  }
  const done = Promise.all(Array.from({ length: clients }, (_, c) => client(c)))
  return {
    outcomes,
    async stop() {
      running = false
      await done
    },
  }
}

const accepted = new Set<string>()
const acceptedOf = (outcomes: Outcome[]) => outcomes.forEach((o) => o.ids.forEach((id) => accepted.add(id)))

// Ingest must be able to publish: the control plane has reached it and the key works.
await eventually(
  async () =>
    (
      await fetch(`${ingestA.url}/e/${key}`, {
        method: 'POST',
        body: '{"name":"ops/warm","data":{}}',
        headers: { 'content-type': 'application/json' },
      })
    ).status === 200
      ? true
      : undefined,
  30_000,
  200,
)

async function sigterm(node: Node, loadUrl: string, t: Test) {
  const traffic = load(loadUrl)
  await new Promise((resolve) => setTimeout(resolve, 2000))
  const signalledAt = Date.now()
  node.child.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 100))
  const ready = await fetch(`${node.url}/readyz`).then(
    (r) => r.status,
    () => 'closed',
  )
  const code = await node.stopped
  const exitMs = Date.now() - signalledAt
  await new Promise((resolve) => setTimeout(resolve, 1000))
  await traffic.stop()
  acceptedOf(traffic.outcomes)
  const before = traffic.outcomes.filter((o) => o.startedAt < signalledAt)
  t.ok(before.filter((o) => o.status === 200).length > 0, `${before.length} requests before the signal`)
  // The client stamps a request before fetch sends it. SERVER_CLOSING is decided when a request
  // reaches the server (its first hook): such a request was started before the signal but reached
  // the server after it, and was never taken. Any other answer is a request the server dropped.
  t.same(
    before.filter((o) => o.status !== 200 && o.code !== 'SERVER_CLOSING'),
    [],
    'every request the server took before the signal was answered 200',
  )
  t.equal(code, 0, 'exit status 0')
  t.ok(exitMs < GRACE_MS, `exited ${exitMs} ms after SIGTERM`)
  return { ready, exitMs, requests: traffic.outcomes.length }
}

t.test('SIGTERM to an ingest process under load', async (t) => {
  const { ready } = await sigterm(ingestA, ingestA.url, t)
  t.not(ready, 200, `/readyz right after SIGTERM: ${ready} (the HTTP listener closes at once without a delay)`)
})

t.test('SIGTERM to a dedup process under load (sent through the other ingest)', async (t) => {
  const { ready } = await sigterm(dedupA, ingestB.url, t)
  t.equal(ready, 503, '/readyz answers 503 right after SIGTERM (the ops listener stays up to the end)')
})

t.test('every acknowledged event is stored', async (t) => {
  const { clickhouseUrl } = testServices()
  const sql = createClient({ url: clickhouseUrl, database: env.SLUICE_CLICKHOUSE_DATABASE })
  t.teardown(() => sql.close())
  const missing = await eventually(
    async () => {
      const rows = await (
        await sql.query({
          query: `SELECT DISTINCT internal_id FROM events WHERE name = 'ops/load'`,
          format: 'JSONEachRow',
        })
      ).json<{ internal_id: string }>()
      const stored = new Set(rows.map((r) => r.internal_id))
      const lost = [...accepted].filter((id) => !stored.has(id))
      return lost.length === 0 ? lost : undefined
    },
    120_000,
    1000,
  ).catch(() => 'some never arrived')
  t.same(missing, [], `all ${accepted.size} acknowledged events in ClickHouse`)
})

t.test('a dedup process killed with -9 is replaced by one ready within 10 s of its start', async (t) => {
  await fetch(`${dedupB.url}/readyz`)
  const startedAt = Date.now()
  dedupB.child.kill('SIGKILL')
  await dedupB.stopped
  const spawnedAt = Date.now()
  const replacement = await start(['transformer', 'dedup'])
  const readyMs = await eventually(
    async () => ((await getJson(`${replacement.url}/readyz`)).status === 200 ? Date.now() - spawnedAt : undefined),
    60_000,
    100,
  )
  t.ok(readyMs < 10_000, `ready ${readyMs} ms after its start (${spawnedAt - startedAt} ms after the kill)`)
})
