// bench/clickhouse: does group commit (store/clickhouse-batcher.ts: concurrent insertEvents
// calls joined into one INSERT) pay? 16 concurrent callers, as the store sink's partitions
// are, each inserting batches of 1, 10, 100 or 1000 events, with `groupCommit` off and on;
// plus one call of 5000 events. Reports events/s and the INSERTs (= new parts) it took,
// from the server's InsertQuery counter: hence a private server, unless a URL is given.
// Usage: node --no-node-snapshot --conditions=sluice-source bench/clickhouse/insert.ts [clickhouse url]
import pino from 'pino'
import type { StoredEvent } from '../../core/event.ts'
import { newUlid } from '../../core/ids.ts'
import { queryLimits } from '../../server/connections.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createClickHouseStores, type ClickHouseStores } from '../../store/clickhouse.ts'
import { startClickHouse } from '../../tests/infra/clickhouse.ts'
import { report } from '../lib.ts'

const server = process.argv[2] === undefined ? await startClickHouse() : undefined
const url = process.argv[2] ?? server!.url
const CALLERS = 16
const log = pino({ level: 'silent' })

function events(count: number): StoredEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const internalId = newUlid()
    return {
      internalId,
      id: internalId,
      name: `bench/e${i % 20}`,
      env: 'production',
      data: { i, plan: 'pro', items: [1, 2, 3] },
      ts: Date.now(),
      receivedAt: Date.now(),
      source: { kind: 'api' },
    }
  })
}

async function sql(query: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', body: query })
  const text = await response.text()
  if (!response.ok) throw new Error(text)
  return text.trim()
}

/** INSERT queries the server has run since it started. */
async function insertQueries(): Promise<number> {
  return Number(await sql("SELECT value FROM system.events WHERE event = 'InsertQuery'"))
}

const rows: Array<Record<string, string | number>> = []
const opened: Array<{ database: string; stores: ClickHouseStores }> = []
try {
  for (const groupCommit of [false, true]) {
    const database = `sluice_bench_${process.pid}_${groupCommit ? 'grouped' : 'direct'}`
    opened.push({
      database,
      stores: await createClickHouseStores({ url, database, groupCommit, limits: queryLimits(DEFAULTS) }, log),
    })
  }
  for (const batchSize of [1, 10, 100, 1000]) {
    const total = Math.min(48_000, batchSize * CALLERS * 40)
    for (const [i, mode] of ['one INSERT per call', 'group commit'].entries()) {
      const { database, stores } = opened[i]
      const work = Array.from({ length: CALLERS }, () =>
        Array.from({ length: total / CALLERS / batchSize }, () => events(batchSize)),
      )
      const insertsBefore = await insertQueries()
      const started = performance.now()
      await Promise.all(
        work.map(async (calls) => {
          for (const batch of calls) await stores.events.insertEvents(batch)
        }),
      )
      const ms = performance.now() - started
      rows.push({
        case: `${CALLERS} callers × ${batchSize}/call`,
        mode,
        events: total,
        inserts: (await insertQueries()) - insertsBefore,
        'events/s': Math.round(total / (ms / 1000)),
        'ms/call': ((ms * CALLERS) / (total / batchSize)).toFixed(1),
      })
      await sql(`TRUNCATE TABLE \`${database}\`.events`)
    }
  }
  const started = performance.now()
  await opened[0].stores.events.insertEvents(events(5000))
  const ms = performance.now() - started
  rows.push({
    case: '1 call × 5000',
    mode: 'one INSERT per call',
    events: 5000,
    inserts: 1,
    'events/s': Math.round(5000 / (ms / 1000)),
    'ms/call': ms.toFixed(1),
  })
} finally {
  for (const { database, stores } of opened) {
    await stores.close()
    await sql(`DROP DATABASE IF EXISTS ${database}`)
  }
  await server?.stop()
}
report('clickhouse-insert', rows, { url })
