// Retention per environment and erasure on ClickHouse, both supported releases (18.16, a current one).
import t from 'tap'
import { sleep } from '../../core/retry.ts'
import { openTestDatabase, serverVersion } from '../helpers/clickhouse-db.ts'
import { clickHouseServers } from '../infra/services.ts'
import { lifecycleSuite } from './lifecycle-suite.ts'

for (const { url } of clickHouseServers()) {
  const version = await serverVersion(url)
  lifecycleSuite(t, `ClickHouse ${version}`, async () => {
    const db = await openTestDatabase('sluice_life', url)
    const pending = async () => {
      const result = await db.sql.query({
        query: `SELECT count() AS n FROM system.mutations WHERE database = '${db.database}' AND is_done = 0`,
        format: 'JSONEachRow',
      })
      return Number((await result.json<{ n: string }>())[0].n)
    }
    return {
      ...db.stores,
      settle: async () => {
        while ((await pending()) > 0) await sleep(100)
      },
      close: db.close,
    }
  })
}
