// The InsightsStore contract on the embedded RocksDB, and what only it has: a budget of entries
// one aggregate reads, past which it says its counts are partial.
import t from 'tap'
import { join } from 'node:path'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { newUlid } from '../../core/ids.ts'
import { createRocksEventStore } from '../../store/rocksdb.ts'
import { createRocksRunStore } from '../../store/runs-rocksdb.ts'
import { createRocksRequestStore } from '../../store/requests-rocksdb.ts'
import { createRocksInsights } from '../../store/insights-rocksdb.ts'
import { removeDir, tempDir } from '../helpers/server.ts'
import { insightsSuite } from './insights-suite.ts'

async function open(scanBudget?: number) {
  const dir = await tempDir()
  const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  return {
    insights: createRocksInsights(rocks, { scanBudget }),
    events: createRocksEventStore(rocks),
    runs: createRocksRunStore(rocks),
    requests: createRocksRequestStore(rocks),
    close: async () => {
      await rocks.close()
      await removeDir(dir)
    },
  }
}

insightsSuite(t, 'RocksDB InsightsStore', () => open())

t.test(
  'RocksDB InsightsStore: past its budget an aggregate answers with partial counts, marked truncated',
  async (t) => {
    const f = await open(100)
    t.teardown(() => f.close())
    const now = Date.now()
    const events = Array.from({ length: 300 }, (_, i) => ({
      internalId: newUlid(now - i),
      id: `e${i}`,
      name: `n${i % 3}`,
      data: {},
      ts: now,
      env: 'production',
      receivedAt: now - i,
      source: { kind: 'api' as const },
    }))
    await f.events.insertEvents(events)
    const counts = await f.insights.eventCounts({ from: now - 60_000, to: now + 1, bucketMs: 60_000, top: 5 })
    const total = counts.series.reduce((n, s) => n + s.total, 0)
    t.equal(counts.truncated, true)
    t.ok(total > 0 && total < 300, `some events counted (${total}), not all`)
  },
)
