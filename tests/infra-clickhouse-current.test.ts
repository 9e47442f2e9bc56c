// The 26.9 launcher (tests/infra/clickhouse-current.ts) is real: a private server, not the
// shared one, answers as ClickHouse 26.9 on loopback, runs the store's kind of table, and
// stop() ends it and removes its data.
import t from 'tap'
import { existsSync } from 'node:fs'
import { createClient } from '@clickhouse/client'
import { isClickHouseReachable } from './infra/clickhouse.ts'
import { startCurrentClickHouse } from './infra/clickhouse-current.ts'
import { isAlive } from './infra/process-group.ts'

t.test('a private ClickHouse 26.9 starts on a loopback port, serves a ReplacingMergeTree, and stops clean', async (t) => {
  const server = await startCurrentClickHouse()
  t.teardown(() => server.stop())
  t.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  const client = createClient({ url: server.url })
  t.teardown(() => client.close())
  const [{ version }] = await (await client.query({ query: 'SELECT version() AS version', format: 'JSONEachRow' })).json<{ version: string }>()
  t.match(version, /^26\.9\./)
  await client.command({ query: 'CREATE TABLE t (id String, v UInt32) ENGINE = ReplacingMergeTree(v) ORDER BY id' })
  await client.insert({ table: 't', format: 'JSONEachRow', values: [{ id: 'a', v: 1 }, { id: 'a', v: 2 }, { id: 'b', v: 1 }] })
  const rows = await (await client.query({ query: 'SELECT id, v FROM t FINAL ORDER BY id', format: 'JSONEachRow' })).json()
  t.same(rows, [{ id: 'a', v: 2 }, { id: 'b', v: 1 }], 'the newest version per key')

  await server.stop()
  t.equal(isAlive(server.pid), false, 'the process is gone')
  t.equal(await isClickHouseReachable(server.url), false, 'the port answers no more')
  t.equal(existsSync(server.dir), false, 'its data dir is removed')
})
