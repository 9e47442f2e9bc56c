// The Insights SQL route (sql-suite.ts) with Debian's ClickHouse 18.16.
import t from 'tap'
import { clickHouseServers } from '../infra/services.ts'
import { sqlSuite } from './sql-suite.ts'

await sqlSuite(t, clickHouseServers().find((s) => s.server === 'debian')!.url)
