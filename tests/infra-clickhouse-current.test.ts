// The 26.9 launcher (tests/infra/clickhouse-current.ts) is real: a private server, not the
// shared one, answers as ClickHouse 26.9 on loopback, runs the store's kind of table, and
// stop() ends it and removes its data.
import t from 'tap'
import { existsSync } from 'node:fs'
import { createClient } from '@clickhouse/client'
import { isClickHouseReachable } from './infra/clickhouse.ts'
import { startCurrentClickHouse } from './infra/clickhouse-current.ts'
import { pollUntil } from './infra/poll.ts'
import { isAlive } from './infra/process-group.ts'

const name = 'a private ClickHouse 26.9 starts on a loopback port, serves a ReplacingMergeTree, and stops clean'
t.test(name, async (t) => {
  const server = await startCurrentClickHouse()
  t.teardown(() => server.stop())
  t.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  const client = createClient({ url: server.url })
  t.teardown(() => client.close())
  const result = await client.query({ query: 'SELECT version() AS version', format: 'JSONEachRow' })
  const [{ version }] = await result.json<{ version: string }>()
  t.match(version, /^26\.9\./)
  await client.command({ query: 'CREATE TABLE t (id String, v UInt32) ENGINE = ReplacingMergeTree(v) ORDER BY id' })
  const values = [
    { id: 'a', v: 1 },
    { id: 'a', v: 2 },
    { id: 'b', v: 1 },
  ]
  await client.insert({ table: 't', format: 'JSONEachRow', values })
  const final = await client.query({ query: 'SELECT id, v FROM t FINAL ORDER BY id', format: 'JSONEachRow' })
  const rows = await final.json()
  t.same(
    rows,
    [
      { id: 'a', v: 2 },
      { id: 'b', v: 1 },
    ],
    'the newest version per key',
  )

  await server.stop()
  // Node reaps its SIGKILLed child a moment later: until then /proc still lists a zombie.
  await pollUntil(async () => !isAlive(server.pid), { what: `pid ${server.pid} reaped`, timeoutMs: 10_000 })
  t.equal(isAlive(server.pid), false, 'the process is gone')
  t.equal(await isClickHouseReachable(server.url), false, 'the port answers no more')
  t.equal(existsSync(server.dir), false, 'its data dir is removed')
})
