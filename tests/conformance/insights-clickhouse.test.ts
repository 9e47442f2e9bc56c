// The InsightsStore contract on ClickHouse, on both releases the store supports (18.16 and
// current), each fixture in a database of its own, dropped when it closes.
import t from 'tap'
import { insightsLimits, queryLimits } from '../../server/connections.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createClickHouseInsights } from '../../store/clickhouse-insights.ts'
import { openTestDatabase, serverVersion } from '../helpers/clickhouse-db.ts'
import { clickHouseServers } from '../infra/services.ts'
import { insightsSuite } from './insights-suite.ts'

for (const { url } of clickHouseServers()) {
  const version = await serverVersion(url)
  insightsSuite(t, `ClickHouse ${version} InsightsStore`, async () => {
    const db = await openTestDatabase('sluice_insights', url)
    const config = { url, database: db.database, limits: queryLimits(DEFAULTS) }
    const insights = await createClickHouseInsights(config, insightsLimits(DEFAULTS))
    return {
      insights,
      ...db.stores,
      close: async () => {
        await insights.close()
        await db.close()
      },
    }
  })
}
