// The EventStore, RunStore and WebhookRequestStore contracts against a real ClickHouse, on
// both releases the store supports (Debian's 18.16 and a current one), each fixture in a
// database of its own, dropped when the fixture closes.
import t from 'tap'
import { openTestDatabase, serverVersion } from '../helpers/clickhouse-db.ts'
import { clickHouseServers } from '../infra/services.ts'
import { eventStoreSuite } from './event-store-suite.ts'
import { runStoreSuite } from './run-store-suite.ts'
import { requestStoreSuite } from './request-store-suite.ts'

for (const { url } of clickHouseServers()) {
  const version = await serverVersion(url)

  eventStoreSuite(t, `ClickHouse ${version} EventStore`, async () => {
    const db = await openTestDatabase('sluice_test', url)
    return { store: db.stores.events, close: db.close }
  })

  runStoreSuite(t, `ClickHouse ${version} RunStore`, async () => {
    const db = await openTestDatabase('sluice_test', url)
    return { store: db.stores.runs, close: db.close }
  })

  requestStoreSuite(t, `ClickHouse ${version} WebhookRequestStore`, async () => {
    const db = await openTestDatabase('sluice_test', url)
    return { store: db.stores.requests, close: db.close }
  })
}
