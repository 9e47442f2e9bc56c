// The Insights SQL route (sql-suite.ts) with the current ClickHouse release (26.9).
import t from 'tap'
import { clickHouseServers } from '../infra/services.ts'
import { sqlSuite } from './sql-suite.ts'

await sqlSuite(t, clickHouseServers().find((s) => s.server === 'current')!.url)
