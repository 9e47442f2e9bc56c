// EventStore on ClickHouse. `events` is a ReplacingMergeTree keyed by (env, name,
// internal_id): a retried insert adds rows with a key already there, and every read uses
// FINAL, so it sees one row per event before and after the background merge collapses them.
import type { EventSource, StoredEvent } from '../core/event.ts'
import type { EventPage, EventQuery, EventStore } from './types.ts'
import type { TableNames } from './clickhouse-schema.ts'
import type { Select } from './clickhouse-read.ts'
import { whereClause, type SqlValues } from './clickhouse-sql.ts'

export interface EventRow {
  internal_id: string
  id: string
  name: string
  env: string
  ts: number | string
  received_at: number | string
  data: string
  source_kind: string
  source: string
  duplicate_of: string | null
  schema_violations: string[]
}

const COLUMNS =
  'internal_id, id, name, env, ts, received_at, data, source_kind, source, duplicate_of, schema_violations'

export function eventToRow(event: StoredEvent): EventRow {
  const { internalId, id, name, env, ts, receivedAt, data, source, duplicateOf, schemaViolations, ...unmapped } = event
  // Compile-time guard: a field added to StoredEvent fails here instead of being dropped silently.
  const nothingLeft: Record<string, never> = unmapped
  void nothingLeft
  return {
    internal_id: internalId,
    id,
    name,
    env,
    ts,
    received_at: receivedAt,
    data: JSON.stringify(data),
    source_kind: source.kind,
    source: JSON.stringify(source),
    duplicate_of: duplicateOf ?? null,
    schema_violations: schemaViolations ?? [],
  }
}

// 64-bit integers arrive as JSON strings (output_format_json_quote_64bit_integers).
function rowToEvent(row: EventRow): StoredEvent {
  return {
    internalId: row.internal_id,
    id: row.id,
    name: row.name,
    env: row.env,
    ts: Number(row.ts),
    receivedAt: Number(row.received_at),
    data: JSON.parse(row.data) as Record<string, unknown>,
    source: JSON.parse(row.source) as EventSource,
    ...(row.duplicate_of !== null && { duplicateOf: row.duplicate_of }),
    ...(row.schema_violations?.length > 0 && { schemaViolations: row.schema_violations }),
  }
}

export interface ClickHouseEventStoreDeps {
  select: Select
  tables: TableNames
  /** Writes rows (batched, one per internal ID kept: see clickhouse.ts). */
  write(rows: EventRow[]): Promise<void>
}

export function createClickHouseEventStore(deps: ClickHouseEventStoreDeps): EventStore {
  const { tables } = deps

  /** The events whose internal ID or dedup ID is `key`, by the full sorting key of `events`. */
  const byKey = (v: SqlValues, key: string) =>
    `(env, name, internal_id) IN (SELECT env, name, internal_id FROM ${tables.eventKeys} WHERE key = ${v.string(key)})`

  async function select(build: (v: SqlValues) => string): Promise<StoredEvent[]> {
    return (await deps.select<EventRow>(build)).map(rowToEvent)
  }

  return {
    async insertEvents(events) {
      if (events.length === 0) return
      await deps.write(events.map(eventToRow))
    },

    async getEvent(internalId) {
      const [event] = await select((v) => {
        const where = whereClause([byKey(v, internalId), `internal_id = ${v.string(internalId)}`])
        return `SELECT ${COLUMNS} FROM ${tables.events} FINAL ${where} LIMIT 1`
      })
      return event ?? null
    },

    async queryEvents(q: EventQuery): Promise<EventPage> {
      if (q.limit <= 0) return { events: [], nextCursor: null }
      const events = await select((v) => {
        const conditions: string[] = []
        if (q.id !== undefined) conditions.push(byKey(v, q.id), `id = ${v.string(q.id)}`)
        if (q.name !== undefined) conditions.push(`name = ${v.string(q.name)}`)
        if (q.env !== undefined) conditions.push(`env = ${v.string(q.env)}`)
        if (q.receivedAfter !== undefined) conditions.push(`received_at > ${v.int(q.receivedAfter)}`)
        if (q.receivedBefore !== undefined) conditions.push(`received_at < ${v.int(q.receivedBefore)}`)
        if (q.includeDuplicates !== true) conditions.push('duplicate_of IS NULL')
        if (q.cursor !== undefined) conditions.push(`internal_id < ${v.string(q.cursor)}`)
        // Every column of a stored event is fixed by its internal ID, so filtering under FINAL
        // cannot pick a stale copy even where a condition runs as PREWHERE (see runs).
        const where = whereClause(conditions)
        const tail = `ORDER BY internal_id DESC LIMIT ${v.int(q.limit + 1)}`
        return `SELECT ${COLUMNS} FROM ${tables.events} FINAL ${where} ${tail}`
      })
      if (events.length <= q.limit) return { events, nextCursor: null }
      const page = events.slice(0, q.limit)
      return { events: page, nextCursor: page[page.length - 1].internalId }
    },

    // The client is shared by the three stores: createClickHouseStores' close() ends it.
    close: async () => {},
  }
}
