// `POST /v1/insights/query` on a distributed api node, against one ClickHouse release (run by
// sql.test.ts on 18.16 and sql-current.test.ts on the current one): one read query under
// readonly = 1 and the caps; anything else refused with a code naming body.sql, and nothing changed.
import type { Test } from 'tap'
import { createClient } from '@clickhouse/client'
import pino from 'pino'
import { newUlid } from '../../core/ids.ts'
import { queryLimits } from '../../server/connections.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createClickHouseStores } from '../../store/clickhouse.ts'
import { serverVersion } from '../helpers/clickhouse-db.ts'
import { getJson, postJson } from '../helpers/server.ts'
import { auth, distributedEnv, startNode } from '../distributed/cluster.ts'

export const SQL_MAX_ROWS = 20

export async function sqlSuite(t: Test, clickhouseUrl: string): Promise<void> {
  const version = await serverVersion(clickhouseUrl)
  const env: NodeJS.ProcessEnv = {
    ...distributedEnv('insights'),
    SLUICE_CLICKHOUSE_URL: clickhouseUrl,
    SLUICE_INSIGHTS_MAX_ROWS: String(SQL_MAX_ROWS),
    SLUICE_INSIGHTS_QUERY_TIMEOUT_SECONDS: '1',
    SLUICE_INSIGHTS_MAX_RESULT_BYTES: '200000',
  }
  const api = await startNode(['api'], env, [], 'start', { startTimeoutMs: 60_000 })
  t.teardown(() => api.kill())
  const database = env.SLUICE_CLICKHOUSE_DATABASE!
  // The rows a sink would write, written by the same store code.
  const config = { url: clickhouseUrl, database, limits: queryLimits(DEFAULTS) }
  const stores = await createClickHouseStores(config, pino({ level: 'silent' }))
  const now = Date.now()
  await stores.events.insertEvents(
    Array.from({ length: 100 }, (_, i) => ({
      internalId: newUlid(now - i * 1000),
      id: `order-${i}`,
      name: i % 4 === 0 ? 'shop/order.refunded' : 'shop/order.placed',
      data: { total: i, plan: i % 2 ? 'pro' : 'free' },
      ts: now,
      env: 'production',
      receivedAt: now - i * 1000,
      source: { kind: 'api' as const },
    })),
  )
  const admin = createClient({ url: clickhouseUrl, database })
  t.teardown(async () => {
    await stores.close()
    await admin.command({ query: `DROP DATABASE IF EXISTS ${database}` })
    await admin.close()
  })
  const count = async () => {
    const r = await admin.query({ query: 'SELECT count() AS n FROM events', format: 'JSONEachRow' })
    return Number((await r.json<{ n: string }>())[0].n)
  }
  const query = (sql: string, headers = auth) => postJson(`${api.url}/v1/insights/query`, { sql }, headers)

  t.test(`ClickHouse ${version}: a SELECT answers columns, rows and a chartable result`, async (t) => {
    const { body: info } = await getJson(`${api.url}/v1/insights`, auth)
    t.match(info.data.sql, { database, max_rows: SQL_MAX_ROWS, timeout_seconds: 1, max_result_bytes: 200000 })
    const { status, body } = await query(
      'SELECT name, count() AS events FROM events FINAL GROUP BY name ORDER BY events DESC;',
    )
    t.equal(status, 200)
    t.same(body.data.columns, [
      { name: 'name', type: 'String' },
      { name: 'events', type: 'UInt64' },
    ])
    t.same(
      body.data.rows.map((r: unknown[]) => [r[0], Number(r[1])]),
      [
        ['shop/order.placed', 75],
        ['shop/order.refunded', 25],
      ],
    )
    t.equal(body.data.truncated, false)
  })

  t.test(`ClickHouse ${version}: the row cap cuts the rows and says so`, async (t) => {
    const { status, body } = await query('SELECT internal_id, name FROM events ORDER BY internal_id')
    t.equal(status, 200)
    t.equal(body.data.rows.length, SQL_MAX_ROWS)
    t.equal(body.data.truncated, true)
    const small = await query('SELECT internal_id FROM events ORDER BY internal_id LIMIT 5')
    t.same([small.body.data.rows.length, small.body.data.truncated], [5, false])
  })

  t.test(`ClickHouse ${version}: the time cap stops a long query with 422 QUERY_TOO_COSTLY`, async (t) => {
    const started = Date.now()
    const { status, body } = await query('SELECT sleepEachRow(0.1), name FROM events')
    t.equal(status, 422)
    t.match(body, { code: 'QUERY_TOO_COSTLY', error: /^body\.sql: the query ran longer than 1 s/ })
    t.ok(Date.now() - started < 8_000, 'stopped near the cap, not after the 10 s the query would take')
  })

  t.test(
    `ClickHouse ${version}: writes, DDL, SET, several statements and settings are refused; nothing changes`,
    async (t) => {
      const refused = [
        "INSERT INTO events (internal_id, name) VALUES ('x', 'x')",
        'DROP TABLE events',
        'SELECT 1; DROP TABLE events',
        'SELECT 1;\nDROP TABLE events;',
        'SET readonly = 0',
        'ALTER TABLE events DELETE WHERE 1',
        'TRUNCATE TABLE events',
        'SELECT * FROM events SETTINGS readonly = 0',
        "SELECT * FROM url('http://127.0.0.1:9/', CSV, 'a String')",
        'SELECT 1) UNION ALL (SELECT 2',
        '/* a comment */ OPTIMIZE TABLE events FINAL',
      ]
      for (const sql of refused) {
        const { status, body } = await query(sql)
        t.equal(status, 400, `${sql}: 400`)
        t.match(body, { code: 'REQUEST_INVALID', error: /^body\.sql: / }, `${sql}: REQUEST_INVALID naming body.sql`)
      }
      t.equal(await count(), 100, 'every event still there')
      const { status, body } = await query('SELECT count() AS n FROM events')
      t.same([status, Number(body.data.rows[0][0])], [200, 100], 'the table still answers')
    },
  )

  t.test(`ClickHouse ${version}: ClickHouse's refusals are 400 SQL_INVALID with its message`, async (t) => {
    const syntax = await query('SELECT name FROM events WHERE')
    t.match([syntax.status, syntax.body.code, syntax.body.error], [400, 'SQL_INVALID', /^body\.sql: .*[Ss]yntax error/])
    const table = await query('SELECT * FROM no_such_table')
    t.match([table.status, table.body.code, table.body.error], [400, 'SQL_INVALID', /no_such_table/])
    const column = await query('SELECT no_such_column FROM events')
    t.match([column.status, column.body.code, column.body.error], [400, 'SQL_INVALID', /no_such_column/])
    const empty = await query('  -- nothing\n')
    t.match([empty.status, empty.body.code], [400, 'REQUEST_INVALID'])
  })

  t.test(`ClickHouse ${version}: the query route is behind the signing key`, async (t) => {
    const { status, body } = await query('SELECT 1', {} as typeof auth)
    t.match([status, body.code], [401, 'UNAUTHORIZED'])
  })

  t.test(`ClickHouse ${version}: the aggregates come from ClickHouse`, async (t) => {
    const { status, body } = await getJson(
      `${api.url}/v1/insights/events?from=${now - 3_600_000}&to=${now + 1}&env=production`,
      auth,
    )
    t.equal(status, 200)
    t.same(
      body.data.series.map((s: { name: string; total: number }) => [s.name, s.total]),
      [
        ['shop/order.placed', 75],
        ['shop/order.refunded', 25],
      ],
    )
    t.equal(body.data.bucket_ms, 60_000)
  })
}
