// A fresh ClickHouse database per fixture on the shared test server, dropped at close.
import { createClient, type ClickHouseClient } from '@clickhouse/client'
import pino from 'pino'
import { createClickHouseStores, type ClickHouseStores } from '../../store/clickhouse.ts'
import { testServices } from '../infra/services.ts'

export interface TestDatabase {
  database: string
  stores: ClickHouseStores
  /** A raw client bound to the database, for what the stores do not expose (counts, parts). */
  sql: ClickHouseClient
  close(): Promise<void>
}

let opened = 0

export async function openTestDatabase(prefix = 'sluice_test'): Promise<TestDatabase> {
  const url = testServices().clickhouseUrl
  const database = `${prefix}_${process.pid}_${++opened}`
  const stores = await createClickHouseStores({ url, database }, pino({ level: 'silent' }))
  const sql = createClient({ url, database })
  return {
    database,
    stores,
    sql,
    async close() {
      try {
        await stores.close()
        await sql.command({ query: `DROP DATABASE IF EXISTS ${database}` })
      } finally {
        await sql.close()
      }
    },
  }
}
