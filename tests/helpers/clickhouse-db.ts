// A fresh ClickHouse database per fixture on a shared test server (18.16 unless a URL is
// given: clickHouseServers() lists both), dropped at close.
import { createClient, type ClickHouseClient } from '@clickhouse/client'
import pino from 'pino'
import { queryLimits } from '../../server/connections.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createClickHouseStores, type ClickHouseConfig, type ClickHouseStores } from '../../store/clickhouse.ts'
import { testServices } from '../infra/services.ts'

export interface TestDatabase {
  database: string
  stores: ClickHouseStores
  /** A raw client bound to the database, for what the stores do not expose (counts, parts). */
  sql: ClickHouseClient
  close(): Promise<void>
}

let opened = 0

export async function openTestDatabase(
  prefix = 'sluice_test',
  url = testServices().clickhouseUrl,
  options: Partial<Pick<ClickHouseConfig, 'limits' | 'cluster' | 'insertQuorum'>> = {},
): Promise<TestDatabase> {
  const database = `${prefix}_${process.pid}_${++opened}`
  const config = { url, database, limits: queryLimits(DEFAULTS), ...options }
  const stores = await createClickHouseStores(config, pino({ level: 'silent' }))
  const onCluster = options.cluster === undefined ? '' : ` ON CLUSTER ${options.cluster}`
  const sql = createClient({ url, database })
  return {
    database,
    stores,
    sql,
    async close() {
      try {
        await stores.close()
        await sql.command({ query: `DROP DATABASE IF EXISTS ${database}${onCluster}` })
      } finally {
        await sql.close()
      }
    },
  }
}

/** What the server at `url` reports, e.g. `18.16.1` or `26.9.2.1`: test names say which ran. */
export async function serverVersion(url: string): Promise<string> {
  const client = createClient({ url })
  try {
    const result = await client.query({ query: 'SELECT version() AS version', format: 'JSONEachRow' })
    const [{ version }] = await result.json<{ version: string }>()
    return version
  } finally {
    await client.close()
  }
}
