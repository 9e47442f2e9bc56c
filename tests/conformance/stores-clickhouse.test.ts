// The EventStore, RunStore and WebhookRequestStore contracts against a real ClickHouse,
// each fixture in a database of its own, dropped when the fixture closes.
import t from 'tap'
import { openTestDatabase } from '../helpers/clickhouse-db.ts'
import { eventStoreSuite } from './event-store-suite.ts'
import { runStoreSuite } from './run-store-suite.ts'
import { requestStoreSuite } from './request-store-suite.ts'

eventStoreSuite(t, 'ClickHouse EventStore', async () => {
  const db = await openTestDatabase()
  return { store: db.stores.events, close: db.close }
})

runStoreSuite(t, 'ClickHouse RunStore', async () => {
  const db = await openTestDatabase()
  return { store: db.stores.runs, close: db.close }
})

requestStoreSuite(t, 'ClickHouse WebhookRequestStore', async () => {
  const db = await openTestDatabase()
  return { store: db.stores.requests, close: db.close }
})
