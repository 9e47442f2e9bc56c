// How the ClickHouse stores read, on both releases: the server's version decides once whether
// values travel as query parameters or as literals (both kept working), and every read is
// bounded: over the row or time limit it fails with QUERY_TOO_COSTLY, on either release.
import t from 'tap'
import { createClient } from '@clickhouse/client'
import type { StoredEvent } from '../../core/event.ts'
import { errorCatalogue } from '../../core/errors.ts'
import { newUlid } from '../../core/ids.ts'
import { createSelect, serverInfo } from '../../store/clickhouse-read.ts'
import { queryLimits } from '../../server/connections.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { openTestDatabase, serverVersion } from '../helpers/clickhouse-db.ts'
import { HOSTILE_STRINGS } from '../helpers/hostile-strings.ts'
import { clickHouseServers } from '../infra/services.ts'

function event(name: string): StoredEvent {
  const internalId = newUlid()
  const now = Date.now()
  return {
    internalId,
    id: internalId,
    name,
    data: { n: 1 },
    ts: now,
    env: 'production',
    receivedAt: now,
    source: { kind: 'api' },
  }
}

const tight = { limits: { queryTimeoutSeconds: 10, maxRowsToRead: 100 } }
const roomier = { limits: { queryTimeoutSeconds: 10, maxRowsToRead: 10_000 } }

for (const { server, url } of clickHouseServers()) {
  const version = await serverVersion(url)

  t.test(`ClickHouse ${version}: detected at start, query parameters only where the server has them`, async (t) => {
    const client = createClient({ url })
    t.teardown(() => client.close())
    t.same(await serverInfo(client), { version, queryParams: server === 'current' })
  })

  t.test(`ClickHouse ${version}: hostile strings come back unchanged, as literals and as parameters`, async (t) => {
    const client = createClient({ url })
    t.teardown(() => client.close())
    const paths = server === 'current' ? [false, true] : [false]
    for (const queryParams of paths) {
      const select = createSelect(client, { version, queryParams }, queryLimits(DEFAULTS))
      for (const value of HOSTILE_STRINGS) {
        type Row = { v: string; n: string | number }
        const rows = await select<Row>((v) => `SELECT ${v.string(value)} AS v, length(v) AS n`)
        const label = `${queryParams ? 'parameter' : 'literal'} ${JSON.stringify(value)}`
        t.equal(rows[0]?.v, value, label)
        t.equal(Number(rows[0]?.n), Buffer.byteLength(value), `${label}: byte length`)
      }
    }
  })

  // 18.16 applies max_rows_to_read to none of the store's reads: it skips the check for a query
  // under FINAL, IN subqueries included (docs/clickhouse.md, "Versions"); the time limit bounds them.
  if (server === 'current') {
    t.test(`ClickHouse ${version}: a read over more rows than the limit fails with QUERY_TOO_COSTLY`, async (t) => {
      const db = await openTestDatabase('sluice_limits', url, tight)
      t.teardown(() => db.close())
      const events = Array.from({ length: 300 }, () => event(`limits/${newUlid()}`))
      await db.stores.events.insertEvents(events)
      const err = await db.stores.events.queryEvents({ limit: 10 }).then(
        () => undefined,
        (e: unknown) => e,
      )
      t.match(
        err,
        {
          code: 'QUERY_TOO_COSTLY',
          statusCode: errorCatalogue.QUERY_TOO_COSTLY.statusCode,
          message: /more than 100 rows \(clickhouseMaxRowsToRead\)/,
        },
        'the unfiltered listing reads all 300 rows',
      )
      // By dedup id: the event_keys lookup reads its one granule, 600 rows here.
      const lookup = db.stores.events.queryEvents({ id: events[0].id, limit: 10 })
      await t.rejects(lookup, { code: 'QUERY_TOO_COSTLY' }, 'a lookup too')

      const roomy = await openTestDatabase('sluice_limits', url, roomier)
      t.teardown(() => roomy.close())
      await roomy.stores.events.insertEvents(events)
      const listed = await roomy.stores.events.queryEvents({ limit: 1000 })
      t.equal(listed.events.length, 300, 'under a higher limit, listed')
      const found = await roomy.stores.events.queryEvents({ id: events[0].id, limit: 10 })
      t.equal(found.events.length, 1, 'and found')
    })
  }

  t.test(`ClickHouse ${version}: a read past the time limit is stopped and fails with QUERY_TOO_COSTLY`, async (t) => {
    const client = createClient({ url })
    t.teardown(() => client.close())
    const select = createSelect(client, await serverInfo(client), { queryTimeoutSeconds: 1, maxRowsToRead: 1000 })
    // Ten rows of half a second each: five seconds unbounded; the rejection is ClickHouse's stop.
    await t.rejects(
      select(() => 'SELECT sleepEachRow(0.5) FROM numbers(10) SETTINGS max_block_size = 1'),
      {
        code: 'QUERY_TOO_COSTLY',
        message: /longer than 1 s \(clickhouseQueryTimeoutSeconds\)/,
      },
    )
  })
}
