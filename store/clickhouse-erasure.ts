// Erasure in ClickHouse (store/erasure-types.ts). Finding: the environment's events whose data
// text holds the value's JSON (`position`, on every version: 18.16 has no JSONExtract, and a
// substring only narrows), newest first, matched exactly in memory; their runs through run_keys
// (keyed by event ID too), their requests by their source. Deleting: `ALTER TABLE … DELETE WHERE
// … IN (…)` mutations, the one way to delete rows on 18.16 and one that current releases keep (a
// lightweight DELETE FROM would only mask the rows until a merge, and the raw bodies must go from
// disk), then a wait until ClickHouse reports them done, so a page found again finds none of them.
import type { ClickHouseClient } from '@clickhouse/client'
import { sleep } from '../core/retry.ts'
import type { TableNames } from './clickhouse-schema.ts'
import { sqlString } from './clickhouse-sql.ts'
import { matchesTarget, requestOf, type ErasureBatch, type ErasureStore } from './erasure-types.ts'

/** How often a wait for mutations asks whether they are done. */
const POLL_MS = 100
/** Mutations of one batch before erase gives up (the job's step is then tried again). */
const MAX_ROUNDS = 5

export function createClickHouseErasure(client: ClickHouseClient, database: string, tables: TableNames): ErasureStore {
  const rows = async <Row>(query: string) => (await client.query({ query, format: 'JSONEachRow' })).json<Row>()
  const list = (values: string[]) => values.map(sqlString).join(', ')
  const nameOf = (table: string) => table.slice(table.lastIndexOf('.') + 2, -1)

  async function mutate(table: string, condition: string): Promise<void> {
    await client.command({ query: `ALTER TABLE ${table} DELETE WHERE ${condition}` })
  }

  async function settled(names: string[]): Promise<void> {
    if (names.length === 0) return
    const query =
      `SELECT count() AS n FROM system.mutations WHERE database = ${sqlString(database)} ` +
      `AND table IN (${list(names)}) AND is_done = 0`
    while (Number((await rows<{ n: string }>(query))[0]?.n ?? 0) > 0) await sleep(POLL_MS)
  }

  return {
    async find(target, limit, cursor) {
      const conditions = [
        `env = ${sqlString(target.env)}`,
        `position(data, ${sqlString(JSON.stringify(target.value))}) > 0`,
        ...(cursor === null ? [] : [`internal_id < ${sqlString(cursor)}`]),
      ]
      const found = await rows<{ internal_id: string; data: string; source: string }>(
        `SELECT internal_id, data, source FROM ${tables.events} WHERE ${conditions.join(' AND ')} ` +
          `ORDER BY internal_id DESC LIMIT ${limit}`,
      )
      const ids = new Set<string>()
      const requests = new Map<string, { webhookId: string; requestId: string }>()
      for (const row of found) {
        const event = { data: JSON.parse(row.data) as Record<string, unknown>, source: JSON.parse(row.source) }
        if (!matchesTarget(event, target)) continue
        ids.add(row.internal_id)
        const request = requestOf(event)
        if (request) requests.set(`${request.webhookId}\0${request.requestId}`, request)
      }
      const runs =
        ids.size === 0
          ? []
          : await rows<{ run_id: string }>(
              `SELECT DISTINCT run_id FROM ${tables.runKeys} WHERE key IN (${list([...ids])})`,
            )
      return {
        batch: { events: [...ids], runs: runs.map((r) => r.run_id), requests: [...requests.values()] },
        next: found.length < limit ? null : found[found.length - 1].internal_id,
      }
    },

    async erase(batch: ErasureBatch) {
      const deletes: Array<[table: string, condition: string]> = []
      if (batch.events.length > 0) {
        const ids = list(batch.events)
        deletes.push([tables.events, `internal_id IN (${ids})`], [tables.eventKeys, `internal_id IN (${ids})`])
      }
      if (batch.runs.length > 0) {
        const ids = list(batch.runs)
        deletes.push([tables.runs, `run_id IN (${ids})`], [tables.runKeys, `run_id IN (${ids})`])
      }
      if (batch.requests.length > 0)
        deletes.push([tables.requests, `request_id IN (${list(batch.requests.map((r) => r.requestId))})`])
      // Done once no row is left: a copy inserted again while the mutation ran (a redelivered
      // batch) is not one it covers, and 18.16 was seen to report a mutation done before reads
      // stopped seeing its rows; such a table gets its mutation again.
      let left = deletes
      for (let round = 0; left.length > 0; round++) {
        if (round === MAX_ROUNDS) throw new Error(`erasure: rows still left in ${left.map(([t]) => t).join(', ')}`)
        for (const [table, condition] of left) await mutate(table, condition)
        await settled(left.map(([table]) => nameOf(table)))
        const counts = await Promise.all(
          left.map(([table, condition]) => rows<{ n: string }>(`SELECT count() AS n FROM ${table} WHERE ${condition}`)),
        )
        left = left.filter((_, i) => Number(counts[i][0]?.n ?? 0) > 0)
        if (left.length > 0) await sleep(POLL_MS)
      }
    },
  }
}
