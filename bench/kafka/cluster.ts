// bench/kafka/cluster.ts: the distributed pipeline's store on a ClickHouse cluster against one server,
// in the same run (docs/clickhouse.md, "On a cluster"). Three layouts, each its own Sluice pipeline
// (api, ingest, dedup + sink: three processes) on its own topics and database:
//   one server   the test services' ClickHouse 18.16 (tests/infra/clickhouse.ts)
//   replicated   one shard × two replicas, insert_quorum 2 (tests/infra/clickhouse-cluster.ts)
//   sharded      two shards, the first of two replicas (quorum 1: the smallest shard has one)
// Rounds alternate the layouts (one, replicated, sharded, one, …) so that a machine busier in one
// moment shows in every layout. Per round and layout:
// - sink events/s: 500-event batches posted by 8 senders for `seconds`, then the events accepted
//   divided by the time from the first acceptance to the moment ClickHouse counts them all
//   (ingest takes far more than the sink writes, so the sink sets the pace);
// - accepted → queryable: single events at 50/s for up to 10 s, each polled (every 20 ms) by an
//   analyst's query through the table reads name (the Distributed one on a cluster): p50 and p99.
// Prints JSON and a table. Usage:
//   node --no-node-snapshot --conditions=sluice-source bench/kafka/cluster.ts [seconds per round] [rounds]
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createClient } from '@clickhouse/client'
import { startClickHouseCluster, CLUSTERS } from '../../tests/infra/clickhouse-cluster.ts'
import { downServices, upServices } from '../../tests/infra/lifecycle.ts'
import { readServicesFile } from '../../tests/infra/services.ts'
import { report, startChild, type Child } from '../lib.ts'
import { round } from '../wrk.ts'

const seconds = Number(process.argv[2] ?? 20)
const rounds = Number(process.argv[3] ?? 3)
const SIGNING_KEY = 'bench-signing-key-0123456789'
const auth = { authorization: `Bearer ${SIGNING_KEY}` }

const hadServices = readServicesFile() !== undefined
const services = await upServices()
const chCluster = await startClickHouseCluster()
const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-cluster-'))
const prefix = `benchcl${Date.now().toString(36)}`
const loadBefore = loadavg()[0]

interface Layout {
  name: string
  url: string
  cluster?: string
}
const LAYOUTS: Layout[] = [
  { name: 'one server', url: services.clickhouseUrl },
  { name: 'replicated (1 shard × 2)', url: chCluster.servers[0].url, cluster: CLUSTERS.replicated },
  { name: 'sharded (2 shards)', url: chCluster.servers[0].url, cluster: CLUSTERS.sharded },
]

let nodes = 0
const node = (args: string[], env: NodeJS.ProcessEnv) =>
  startChild(
    ['bin/sluice.js', ...args, '--port', '0', '--ops-port', '0', '--data-dir', join(dir, String(nodes++))],
    env,
  )

interface Pipeline {
  layout: Layout
  database: string
  ingest: Child
  key: string
  children: Child[]
}

async function startPipeline(layout: Layout, i: number): Promise<Pipeline> {
  const database = `${prefix}_${i}`
  const env: NodeJS.ProcessEnv = {
    SLUICE_KAFKA_BROKERS: services.kafkaBrokers.join(','),
    SLUICE_CLICKHOUSE_URL: layout.url,
    SLUICE_CLICKHOUSE_DATABASE: database,
    SLUICE_TOPIC_PREFIX: database,
    SLUICE_SIGNING_KEY: SIGNING_KEY,
    SLUICE_LOG_LEVEL: 'info', // startChild reads the URL from the 'up' line
    SLUICE_PARTITIONS: '4',
    ...(layout.cluster && { SLUICE_CLICKHOUSE_CLUSTER: layout.cluster }),
  }
  const api = await node(['start', '--role', 'api'], env) // creates the tables
  const [ingest, sink] = await Promise.all([
    node(['start', '--role', 'ingest'], env),
    node(['start', '--role', 'dedup', '--role', 'sink'], env),
  ])
  const created = await fetch(`${api.url}/v1/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify({ env: 'production' }),
  })
  const key = ((await created.json()) as { data: { key: string } }).data.key
  return { layout, database, ingest, key, children: [api, ingest, sink] }
}

const sql = createClient({ url: services.clickhouseUrl })
const clients = new Map(
  LAYOUTS.map((l) => [l.url, l.url === services.clickhouseUrl ? sql : createClient({ url: l.url })]),
)
async function scalar(p: Pipeline, query: string): Promise<number> {
  const result = await clients.get(p.layout.url)!.query({ query, format: 'JSONEachRow' })
  const [row] = await result.json<{ n: string }>()
  return Number(row?.n ?? 0)
}

/** Posts until ingest accepts (it learns a new key from the control topic); 60 s at most. */
const post = async (p: Pipeline, body: unknown): Promise<string[]> => {
  const deadline = Date.now() + 60_000
  for (;;) {
    const r = await fetch(`${p.ingest.url}/e/${p.key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (r.ok) return ((await r.json()) as { ids: string[] }).ids
    if (Date.now() > deadline) throw new Error(`ingest answers ${r.status}: ${await r.text()}`)
    await sleep(50)
  }
}

async function sinkThroughput(p: Pipeline, name: string): Promise<number> {
  const batch = Array.from({ length: 500 }, (_, i) => ({ name, data: { orderId: `o-${i}`, amount: i } }))
  let accepted = 0
  let firstAt = 0
  const until = Date.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (Date.now() < until) {
        const ids = await post(p, batch)
        firstAt ||= Date.now()
        accepted += ids.length
      }
    }),
  )
  const count = `SELECT count() AS n FROM ${p.database}.events WHERE name = '${name}'`
  const deadline = Date.now() + 120_000
  for (;;) {
    const stored = await scalar(p, count)
    if (stored >= accepted) break
    if (Date.now() > deadline) throw new Error(`${p.layout.name}: ${stored} of ${accepted} events stored after 120 s`)
    await sleep(50)
  }
  return Math.round((accepted * 1000) / (Date.now() - firstAt))
}

async function acceptedToQueryable(p: Pipeline, name: string): Promise<number[]> {
  const events = Math.min(seconds, 10) * 50
  const accepted = new Map<string, number>()
  const seen = new Map<string, number>()
  let polling = true
  const poller = (async () => {
    const query = `SELECT internal_id FROM ${p.database}.events WHERE name = '${name}'`
    while (polling) {
      const asked = Date.now()
      const result = await clients.get(p.layout.url)!.query({ query, format: 'JSONEachRow' })
      for (const { internal_id } of await result.json<{ internal_id: string }>())
        if (!seen.has(internal_id)) seen.set(internal_id, asked)
      await sleep(20)
    }
  })()
  const start = Date.now()
  for (let i = 0; i < events; i++) {
    const due = start + i * 20
    if (due > Date.now()) await sleep(due - Date.now())
    const [id] = await post(p, { name, data: { i } })
    accepted.set(id, Date.now())
  }
  const deadline = Date.now() + 60_000
  while ([...accepted.keys()].some((id) => !seen.has(id)) && Date.now() < deadline) await sleep(100)
  polling = false
  await poller
  return [...accepted].filter(([id]) => seen.has(id)).map(([id, at]) => Math.max(0, seen.get(id)! - at))
}

function pct(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const v = [...values].sort((x, y) => x - y)
  return round(v[Math.min(v.length - 1, Math.ceil((p / 100) * v.length) - 1)])
}

const pipelines: Pipeline[] = []
for (const [i, layout] of LAYOUTS.entries()) pipelines.push(await startPipeline(layout, i))
const rows: Array<Record<string, string | number>> = []
const perLayout = new Map<string, { rates: number[]; latencies: number[] }>(
  LAYOUTS.map((l) => [l.name, { rates: [], latencies: [] }]),
)
for (let r = 0; r < rounds; r++) {
  for (const p of pipelines) {
    const rate = await sinkThroughput(p, `bench/load-${r}`)
    const latencies = await acceptedToQueryable(p, `bench/latency-${r}`)
    const summary = perLayout.get(p.layout.name)!
    summary.rates.push(rate)
    summary.latencies.push(...latencies)
    const row = {
      round: r + 1,
      layout: p.layout.name,
      'sink events/s': rate,
      'queryable p50 ms': pct(latencies, 50),
      'queryable p99 ms': pct(latencies, 99),
      measured: latencies.length,
    }
    process.stderr.write(`bench/kafka/cluster: ${JSON.stringify(row)}\n`)
    rows.push(row)
  }
}

await Promise.all(pipelines.flatMap((p) => p.children.map((c) => c.stop())))
await Promise.all([...clients.values()].map((c) => c.close()))
await chCluster.stop()
await rm(dir, { recursive: true, force: true })
if (!hadServices) await downServices()
const median = (values: number[]) => pct(values, 50)
const layouts = Object.fromEntries(
  [...perLayout].map(([name, s]) => [
    name,
    { sinkEventsPerSec: median(s.rates), queryableP50Ms: pct(s.latencies, 50), queryableP99Ms: pct(s.latencies, 99) },
  ]),
)
report('kafka-cluster', rows, {
  seconds,
  rounds,
  clickhouse: '18.16, one server and a cluster of three on ZooKeeper 3.9.5, all on this machine',
  loadAverage: { before: loadBefore, after: loadavg()[0] },
  layouts,
})
process.exit(0)
