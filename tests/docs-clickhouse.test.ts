// Keeps docs/clickhouse.md true: its DDL is exactly what the store runs, and every example
// query runs on real servers, 18.16 and current, against data written through the stores, with results.
import t from 'tap'
import { schemaStatements } from '../store/clickhouse-schema.ts'
import { clusterSchemaStatements } from '../store/clickhouse-cluster-schema.ts'
import { openTestDatabase, serverVersion } from './helpers/clickhouse-db.ts'
import { checkShopAnswers, docBlocks, runExamples, seedShop, statementsOf } from './helpers/clickhouse-docs.ts'
import { clickHouseServers } from './infra/services.ts'

const { blocks, ddl, examples } = docBlocks()
// The cluster layout's statements are shown under headings that say so (docs "On a cluster").
const clusterDdl = ddl.filter((b) => /cluster/i.test(b.heading))

t.test('the documented DDL is the schema the store creates, statement for statement', async (t) => {
  t.same(
    ddl.filter((b) => !clusterDdl.includes(b)).flatMap((b) => statementsOf(b.sql)),
    schemaStatements('sluice'),
  )
})

t.test("the cluster layout's documented DDL is what the store runs on a cluster named sluice_cluster", async (t) => {
  const statements = clusterSchemaStatements('sluice', 'sluice_cluster')
  t.ok(clusterDdl.length > 0, 'the doc shows the cluster layout')
  for (const sql of clusterDdl.flatMap((b) => statementsOf(b.sql))) t.ok(statements.includes(sql), sql.split('\n')[0])
})

t.test('the doc has 6 to 8 example queries and every sql block is DDL or one', async (t) => {
  t.ok(examples.length >= 6 && examples.length <= 8, `${examples.length} examples`)
  t.equal(ddl.length + examples.length, blocks.length)
})

// On both releases the store supports, as the doc claims: Debian's 18.16 and a current one.
for (const { url } of clickHouseServers()) {
  const version = await serverVersion(url)

  t.test(`ClickHouse ${version}: every example query runs on the real server and returns rows`, async (t) => {
    const db = await openTestDatabase('sluice_docs', url)
    t.teardown(() => db.close())
    const data = await seedShop(db)
    checkShopAnswers(t, await runExamples(db), data)
  })
}
