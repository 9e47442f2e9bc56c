// The distributed pipeline on a real replicated ClickHouse cluster (ZooKeeper and 18.16 servers,
// tests/infra/clickhouse-cluster.ts), Sluice creating the tables itself: every acknowledged event
// stored exactly once, and a replica killed with kill -9 mid-load and restarted loses nothing, while
// reads keep answering from the other replica and the sink's /readyz says it cannot write.
import t, { type Test } from 'tap'
import { createClient } from '@clickhouse/client'
import { eventually, getJson, postJson } from '../helpers/server.ts'
import { CLUSTERS, startClickHouseCluster } from '../infra/clickhouse-cluster.ts'
import { auth, distributedEnv, type Node, startNode } from './cluster.ts'

// A JVM, three servers and a replica's restart (20 s alone; more on a busy machine).
t.setTimeout(240_000)
const cluster = await startClickHouseCluster()
t.teardown(() => cluster.stop())
const [a, b, c] = cluster.servers

async function rows<Row>(url: string, query: string): Promise<Row[]> {
  const client = createClient({ url })
  try {
    return await (await client.query({ query, format: 'JSONEachRow' })).json<Row>()
  } finally {
    await client.close()
  }
}

/** The api (which creates the tables on the cluster) and ingest + dedup + sink, on `clusterName`. */
async function pipelineOn(t: Test, clusterName: string) {
  const env: NodeJS.ProcessEnv = {
    ...distributedEnv('chcluster'),
    SLUICE_CLICKHOUSE_URL: a.url,
    SLUICE_CLICKHOUSE_CLUSTER: clusterName,
  }
  const nodes: Node[] = []
  t.teardown(() => Promise.all(nodes.map((n) => n.kill('SIGKILL'))))
  const api = await startNode(['api'], env)
  nodes.push(api)
  const pipeline = await startNode(['ingest', 'dedup', 'sink'], env)
  nodes.push(pipeline)
  const key: string = (await postJson(`${api.url}/v1/keys`, { env: 'production' }, auth)).body.data.key
  const acknowledged: string[] = []
  let sent = 0
  const send = async (batches: number) => {
    for (let i = 0; i < batches; i++) {
      const events = Array.from({ length: 50 }, () => ({ name: 'load/tick', data: { n: sent++ } }))
      const response = await eventually(async () => {
        const r = await postJson(`${pipeline.url}/e/${key}`, events)
        return r.status === 200 ? r : undefined
      }, 30_000)
      acknowledged.push(...response.body.ids)
    }
  }
  const database = env.SLUICE_CLICKHOUSE_DATABASE!
  const stored = async (url: string, table: string) =>
    Number((await rows<{ n: string }>(url, `SELECT count() AS n FROM ${database}.${table} FINAL`))[0].n)
  const readiness = async () => {
    const r = await fetch(`${pipeline.opsUrl}/readyz`)
    return { status: r.status, body: await r.text() }
  }
  return { api, pipeline, database, acknowledged, send, stored, readiness }
}

t.test('two shards: every acknowledged event is stored once, on the shard of its ID', async (t) => {
  const { acknowledged, send, stored } = await pipelineOn(t, CLUSTERS.sharded)
  await send(4)
  const total = acknowledged.length
  await eventually(async () => ((await stored(a.url, 'events')) === total ? true : undefined), 60_000, 200)
  const [first, second] = [await stored(a.url, 'events_local'), await stored(c.url, 'events_local')]
  t.equal(first + second, total, `${total} events: ${first} on the first shard, ${second} on the second`)
  t.ok(first > 0 && second > 0, 'both shards hold some')
})

t.test('one shard × two replicas: a replica killed mid-load loses nothing and reads keep answering', async (t) => {
  const { api, database, acknowledged, send, stored, readiness } = await pipelineOn(t, CLUSTERS.replicated)

  await send(6)
  await eventually(
    async () => ((await stored(a.url, 'events')) === acknowledged.length ? true : undefined),
    60_000,
    200,
  )
  t.equal((await readiness()).status, 200, 'ready while both replicas write')
  const before = acknowledged[17]

  await cluster.kill(1)
  // Until the Keeper ends the killed replica's session, a quorum insert waits for it; after, it is refused at once.
  const active = async () =>
    Number(
      (
        await rows<{ n: string }>(
          a.url,
          `SELECT active_replicas AS n FROM system.replicas WHERE database = '${database}' AND table = 'events_local'`,
        )
      )[0].n,
    )
  await eventually(async () => ((await active()) === 1 ? true : undefined), 30_000, 200)
  await send(6) // ingest keeps accepting into Kafka
  const notReady = await eventually(
    async () => {
      const r = await readiness()
      return r.status === 503 ? r : undefined
    },
    60_000,
    200,
  )
  // 285: fewer alive replicas than the quorum; 286 or a timeout's code when an insert was under way.
  t.match(notReady.body, /cannot write to events \(ClickHouse code \d+\)/, `/readyz says why: ${notReady.body}`)
  const read = await getJson(`${api.url}/v1/events/${before}`, auth)
  t.equal(read.status, 200, 'a stored event still reads, from the replica that is up')
  t.equal(read.body.data.internal_id, before)
  const listed = await getJson(`${api.url}/v1/events?name=load/tick&limit=5`, auth)
  t.equal(listed.body.data.length, 5, 'listings still answer')

  await cluster.restart(1)
  await send(2)
  const total = acknowledged.length
  await eventually(async () => ((await stored(a.url, 'events')) === total ? true : undefined), 90_000, 250)
  await eventually(async () => ((await readiness()).status === 200 ? true : undefined), 30_000, 200)
  t.pass('/readyz is 200 again once inserts succeed')
  await eventually(async () => ((await stored(b.url, 'events_local')) === total ? true : undefined), 60_000, 250)
  const [counts] = await rows<{ rows: string; events: string }>(
    a.url,
    `SELECT count() AS rows, uniqExact(internal_id) AS events FROM ${database}.events FINAL`,
  )
  t.same(
    { rows: Number(counts.rows), events: Number(counts.events) },
    { rows: total, events: total },
    `every one of the ${total} acknowledged events once, on the cluster`,
  )
  const missing = await rows<{ internal_id: string }>(
    a.url,
    `SELECT internal_id FROM ${database}.events FINAL
      WHERE internal_id IN (${acknowledged.map((id) => `'${id}'`).join(',')})`,
  )
  t.equal(new Set(missing.map((r) => r.internal_id)).size, total, 'each acknowledged ID is there')
  t.equal(await stored(b.url, 'events_local'), total, 'the restarted replica caught up: it has every event')
})
