// The whole pipeline on a real Kafka broker and a real ClickHouse: two ingest nodes, two
// transformer+dedup nodes, a router, a sink, an api node and a runner, as separate processes.
// Run once per ClickHouse release the store supports, by e2e.test.ts (18.16) and
// e2e-current.test.ts (current), each file a process of its own so the two can run side by side.
import { createHmac } from 'node:crypto'
import type { Test } from 'tap'
import { fileURLToPath } from 'node:url'
import { postJson, getJson, eventually } from '../helpers/server.ts'
import { serverVersion } from '../helpers/clickhouse-db.ts'
import { distributedEnv, startNode, auth, type Node } from './cluster.ts'

const functionsFile = fileURLToPath(new URL('./functions.ts', import.meta.url))

export async function e2eSuite(t: Test, clickhouseUrl: string): Promise<void> {
  t.setTimeout(240_000)
  const env = { ...distributedEnv('e2e'), SLUICE_CLICKHOUSE_URL: clickhouseUrl }
  const version = await serverVersion(clickhouseUrl)
  const nodes: Node[] = []
  const track = async (starting: Promise<Node>) => {
    const node = await starting
    nodes.push(node)
    return node
  }
  t.teardown(() => Promise.all(nodes.map((n) => n.kill())))
  // Backstop: a run that ends early (one node never came up) must not leave the others
  // behind, in consumer groups of the shared broker that the next run would join.
  process.once('exit', () => nodes.forEach((n) => n.child.exitCode === null && n.child.kill('SIGKILL')))
  // The api node first: it creates the ClickHouse tables that the sink writes to.
  const api = await track(startNode(['api'], env))
  // allSettled: every node that comes up is tracked (so stopped) before a failure is thrown.
  const started = await Promise.allSettled(
    [
      startNode(['ingest'], env),
      startNode(['ingest'], env),
      startNode(['transformer', 'dedup'], env),
      startNode(['transformer', 'dedup'], env),
      startNode(['router'], env),
      startNode(['sink'], env),
      startNode(['runner'], env, ['--functions', functionsFile]),
    ].map(track),
  )
  for (const s of started) if (s.status === 'rejected') throw s.reason
  const [ingestA, ingestB] = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
  const rest = (path: string) => getJson(`${api.url}${path}`, auth)

  t.test(
    `ClickHouse ${version}: events in through two ingest nodes, rows in ClickHouse, each function runs once per event`,
    async (t) => {
      const { body: key } = await fetch(`${api.url}/v1/keys`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ env: 'production' }),
      }).then(async (r) => ({ body: (await r.json()).data }))
      await eventually(
        async () => ((await rest('/v1/functions')).body.data.length === 2 ? true : undefined),
        60_000,
        250,
      )
      const accepted: string[] = []
      for (let i = 0; i < 40; i++) {
        const node = i % 2 ? ingestA : ingestB
        // Every 4th event repeats the id of the one before: dedup must drop it, across ingest nodes.
        const id = `order-${i % 4 === 3 ? i - 1 : i}`
        // The control plane reaches every ingest node through its compacted topic.
        const r = await eventually(
          async () => {
            const p = await postJson(`${node.url}/e/${key.key}`, {
              name: 'e2e/order.placed',
              data: { orderId: id },
              id,
            })
            return p.status === 200 ? p : undefined
          },
          30_000,
          100,
        )
        accepted.push(r.body.ids[0])
      }
      const stored = await eventually(
        async () => {
          const r = await rest('/v1/events?name=e2e/order.placed&include_duplicates=true&limit=1000')
          return r.body.data.length === 40 ? r.body.data : undefined
        },
        90_000,
        500,
      )
      t.same(
        new Set(stored.map((e: { internal_id: string }) => e.internal_id)),
        new Set(accepted),
        'every accepted event is a row',
      )
      const originals = stored.filter((e: { duplicate_of?: string }) => !e.duplicate_of)
      t.equal(originals.length, 30, '30 distinct ids, 10 duplicates')
      t.equal(new Set(originals.map((e: { id: string }) => e.id)).size, 30)
      const runs = await eventually(
        async () => {
          const r = await rest('/v1/runs?status=completed&limit=1000')
          return r.body.data.length >= 60 ? r.body.data : undefined
        },
        90_000,
        500,
      )
      t.equal(runs.length, 60, 'two functions × 30 events')
      const perEventFunction = new Set(
        runs.map((r: { event_id: string; function_id: string }) => `${r.event_id}/${r.function_id}`),
      )
      t.equal(perEventFunction.size, 60, 'each function ran once per event')
    },
  )

  t.test(`ClickHouse ${version}: a webhook delivered to an ingest node is transformed and stored`, async (t) => {
    const created = await fetch(`${api.url}/v1/webhooks`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'shop',
        transform: 'function transform(evt) { return { name: "e2e/webhook." + evt.kind, data: evt } }',
      }),
    }).then((r) => r.json())
    const hook = created.data
    const r = await eventually(
      async () => {
        const p = await postJson(`${ingestB.url}/e/${hook.id}`, { kind: 'paid', amount: 5 })
        return p.status === 200 ? p : undefined
      },
      30_000,
      100,
    )
    t.equal(r.status, 200)
    const stored = await eventually(
      async () => {
        const q = await rest('/v1/events?name=e2e/webhook.paid')
        return q.body.data.length ? q.body.data[0] : undefined
      },
      60_000,
      500,
    )
    t.match(stored, { data: { kind: 'paid', amount: 5 }, source: { kind: 'webhook', webhook_id: hook.id } })
  })

  t.test(`ClickHouse ${version}: a provider's redelivery, through the other ingest node, is stored once`, async (t) => {
    const secret = 'e2e-github-secret'
    const created = await fetch(`${api.url}/v1/webhooks`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'gh', verification: { preset: 'github', secret } }),
    }).then((r) => r.json())
    const hook = created.data
    const body = JSON.stringify({ action: 'opened', number: 7 })
    const delivery = `e2e-delivery-${Date.now()}`
    const headers = {
      'content-type': 'application/json',
      'X-GitHub-Event': 'pull_request',
      'X-GitHub-Delivery': delivery,
      'X-Hub-Signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    }
    // GitHub retries a delivery it saw no 2xx for: same X-GitHub-Delivery, possibly another node.
    for (const node of [ingestA, ingestB]) {
      await eventually(
        async () => {
          const r = await fetch(`${node.url}/e/${hook.id}`, { method: 'POST', headers, body })
          return r.status === 200 ? r : undefined
        },
        30_000,
        100,
      )
    }
    const copies = await eventually(
      async () => {
        const r = await rest(`/v1/events?id=${delivery}&include_duplicates=true`)
        return r.body.data.length === 2 ? r.body.data : undefined
      },
      60_000,
      500,
    )
    const originals = copies.filter((e: { duplicate_of?: string }) => !e.duplicate_of)
    t.equal(originals.length, 1, 'one original, one duplicate')
    t.equal(copies.find((e: { duplicate_of?: string }) => e.duplicate_of).duplicate_of, originals[0].internal_id)
    t.equal((await rest(`/v1/events?id=${delivery}`)).body.data.length, 1, 'stored once')
  })
}
