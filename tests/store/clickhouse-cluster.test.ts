// The store on a real replicated, sharded ClickHouse cluster (ZooKeeper and three 18.16 servers,
// tests/infra/clickhouse-cluster.ts): the tables Sluice creates there, a restart that creates nothing
// twice, the three store contracts on two shards, and the analysts' queries of docs/clickhouse.md
// answering on a cluster exactly as on one server.
import t from 'tap'
import pino from 'pino'
import { createClient } from '@clickhouse/client'
import { DEFAULTS } from '../../config/settings.ts'
import { insightsLimits, queryLimits } from '../../server/connections.ts'
import { createClickHouseInsights } from '../../store/clickhouse-insights.ts'
import { createClickHouseStores } from '../../store/clickhouse.ts'
import { openTestDatabase } from '../helpers/clickhouse-db.ts'
import { runExamples, seedShop, shopData, checkShopAnswers } from '../helpers/clickhouse-docs.ts'
import { CLUSTERS, startClickHouseCluster } from '../infra/clickhouse-cluster.ts'
import { testServices } from '../infra/services.ts'
import { eventStoreSuite } from '../conformance/event-store-suite.ts'
import { runStoreSuite } from '../conformance/run-store-suite.ts'
import { requestStoreSuite } from '../conformance/request-store-suite.ts'

// Three servers, a JVM and ~20 schemas through the Keeper's DDL queue (75 s alone; more on a busy machine).
t.setTimeout(300_000)
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

const engines = (url: string, database: string) =>
  rows<{ name: string; engine: string }>(
    url,
    `SELECT name, engine FROM system.tables WHERE database = '${database}' AND engine NOT LIKE '%View' ORDER BY name`,
  )

t.test(
  'on a cluster of one shard × two replicas, every table is replicated and read through Distributed',
  async (t) => {
    const db = await openTestDatabase('sluice_cluster', a.url, { cluster: CLUSTERS.replicated })
    t.teardown(() => db.close())
    const tables = await engines(a.url, db.database)
    const local = tables.filter((r) => r.name.endsWith('_local'))
    t.same(
      local.map((r) => r.name),
      [
        'audit_log_local',
        'event_keys_local',
        'events_local',
        'removed_webhooks_local',
        'run_keys_local',
        'runs_local',
        'webhook_requests_local',
      ],
    )
    t.ok(
      local.every((r) => r.engine === 'ReplicatedReplacingMergeTree'),
      'local tables: ReplicatedReplacingMergeTree',
    )
    t.ok(
      tables.filter((r) => !r.name.endsWith('_local')).every((r) => r.engine === 'Distributed'),
      'the others Distributed',
    )
    t.same(await engines(b.url, db.database), tables, 'the other replica has the same tables (ON CLUSTER)')
    t.same(await engines(c.url, db.database), [], 'a server outside the cluster has none')

    const { events } = shopData()
    await db.stores.events.insertEvents(events)
    await db.stores.events.insertEvents(events) // the same batch again: 18.16 drops the block by its hash
    const raw = await Promise.all(
      [a, b].map((s) => rows<{ n: string }>(s.url, `SELECT count() AS n FROM ${db.database}.events_local`)),
    )
    t.same(
      raw.map((r) => Number(r[0].n)),
      [events.length, events.length],
      'a batch inserted twice is stored once on each replica, before any merge',
    )
    await db.stores.events.insertEvents(events.slice(0, 5)) // another batch of the same rows: collapsed by FINAL
    const copies = await Promise.all(
      [a, b].map((s) => rows<{ n: string }>(s.url, `SELECT count() AS n FROM ${db.database}.events_local FINAL`)),
    )
    t.same(
      copies.map((r) => Number(r[0].n)),
      [events.length, events.length],
      'both replicas hold every event once (the insert waited for the quorum of 2)',
    )
    const storesB = await createClickHouseStores(
      { url: b.url, database: db.database, limits: queryLimits(DEFAULTS), cluster: CLUSTERS.replicated },
      pino({ level: 'silent' }),
    )
    t.teardown(() => storesB.close())
    t.same(await storesB.events.getEvent(events[3].internalId), events[3], 'a point lookup on the other replica')
    const byDedupId = await storesB.events.queryEvents({ id: events[0].id, limit: 10 })
    t.same(
      byDedupId.events.map((e) => e.internalId),
      [events[0].internalId],
      'a lookup by dedup id through the key tables',
    )
  },
)

t.test('a restart creates nothing twice, also after a start that stopped halfway, and logs no error', async (t) => {
  const db = await openTestDatabase('sluice_restart', a.url, { cluster: CLUSTERS.sharded })
  t.teardown(() => db.close())
  // Half done: the last two statements (audit_log's local and Distributed tables) never ran.
  const on = `ON CLUSTER ${CLUSTERS.sharded}`
  await db.sql.command({ query: `DROP TABLE ${db.database}.audit_log ${on}` })
  await db.sql.command({ query: `DROP TABLE ${db.database}.audit_log_local ${on}` })
  const logged: Array<{ level: number; msg: string; created?: number }> = []
  const log = pino({ level: 'debug' }, { write: (line: string) => logged.push(JSON.parse(line)) })
  const config = { url: a.url, database: db.database, limits: queryLimits(DEFAULTS), cluster: CLUSTERS.sharded }
  for (const expected of [2, 0]) {
    const stores = await createClickHouseStores(config, log)
    await stores.close()
    t.equal(logged.find((l) => l.msg === 'clickhouse schema ready')?.created, expected, `created ${expected}`)
    t.notOk(
      logged.some((l) => l.level >= 50),
      'no error logged',
    )
    logged.splice(0)
  }
  t.same(
    (await engines(c.url, db.database)).map((r) => r.name),
    (await engines(a.url, db.database)).map((r) => r.name),
    'the other shard has them again',
  )
})

t.test('a cluster the servers do not know is refused at start, naming the setting', async (t) => {
  const config = { url: a.url, database: 'sluice_nowhere', limits: queryLimits(DEFAULTS), cluster: 'nowhere' }
  await t.rejects(createClickHouseStores(config, pino({ level: 'silent' })), {
    code: 'CONFIG_INVALID',
    message: /clickhouseCluster \(--clickhouse-cluster \/ SLUICE_CLICKHOUSE_CLUSTER\).*"nowhere"/,
  })
})

t.test("docs/clickhouse.md's example queries answer on both clusters as on one server", async (t) => {
  const data = shopData()
  const sorted = (results: Map<string, Array<Record<string, unknown>>>) =>
    new Map([...results].map(([h, r]) => [h, r.map((row) => JSON.stringify(row)).sort()]))
  const single = await openTestDatabase('sluice_docs_one', testServices().clickhouseUrl)
  t.teardown(() => single.close())
  await seedShop(single, data)
  const expected = sorted(await runExamples(single))
  for (const name of [CLUSTERS.replicated, CLUSTERS.sharded]) {
    const db = await openTestDatabase('sluice_docs_cluster', a.url, { cluster: name })
    t.teardown(() => db.close())
    await seedShop(db, data)
    const results = await runExamples(db)
    checkShopAnswers(t, results, data)
    t.same(sorted(results), expected, `${name}: every example's rows as on one server`)
    // An analyst's subquery on another Distributed table, which ClickHouse refuses by default.
    const insights = await createClickHouseInsights(
      { url: a.url, database: db.database, limits: queryLimits(DEFAULTS), cluster: name },
      insightsLimits(DEFAULTS),
    )
    t.teardown(() => insights.close())
    const answer = await insights.sql!.query(
      'SELECT count() AS n FROM events WHERE internal_id IN ' +
        "(SELECT event_id FROM runs WHERE function_id = 'shop-charge')",
    )
    t.equal(Number(answer.rows[0]?.[0]), 4, `${name}: Insights SQL with a subquery on another Distributed table`)
  }
})

// The store contracts on two shards (the first replicated): every lookup, listing, tombstone and
// deletion finds its rows across shards.
const onSharded = async () => openTestDatabase('sluice_contract', a.url, { cluster: CLUSTERS.sharded })
eventStoreSuite(t, 'ClickHouse cluster (2 shards) EventStore', async () => {
  const db = await onSharded()
  return { store: db.stores.events, close: db.close }
})
runStoreSuite(t, 'ClickHouse cluster (2 shards) RunStore', async () => {
  const db = await onSharded()
  return { store: db.stores.runs, close: db.close }
})
requestStoreSuite(t, 'ClickHouse cluster (2 shards) WebhookRequestStore', async () => {
  const db = await onSharded()
  return { store: db.stores.requests, close: db.close }
})
