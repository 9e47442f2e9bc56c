// The distributed audit log: the ClickHouse table `audit_log` (clickhouse-schema.ts), one row per
// entry, inserted by the api process that made the change (synchronously: an entry is durable when
// the change is answered), read newest first by ID. A retried insert's copy collapses (FINAL).
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client'
import type { Select } from './clickhouse-read.ts'
import type { TableNames } from './clickhouse-schema.ts'
import type { AuditRecord, AuditStore } from './audit-types.ts'

type Row = { id: string; at: string | number; entry: string }

export function createClickHouseAuditStore(deps: {
  client: ClickHouseClient
  select: Select
  tables: TableNames
  insertSettings: ClickHouseSettings
}): AuditStore {
  const table = deps.tables.audit
  return {
    async append(records) {
      await deps.client.insert({
        table,
        values: records.map((r) => ({
          id: r.id,
          at: r.at,
          actor_kind: r.entry.actor.kind,
          actor_name: r.entry.actor.name ?? '',
          action: r.entry.action,
          env: r.entry.env ?? '',
          entry: JSON.stringify(r.entry),
        })),
        format: 'JSONEachRow',
        clickhouse_settings: deps.insertSettings,
      })
    },
    async page(q) {
      const rows = await deps.select<Row>((v) => {
        const where = ['1 = 1']
        if (q.before !== undefined) where.push(`id < ${v.string(q.before)}`)
        if (q.since !== undefined) where.push(`at >= ${v.int(q.since)}`)
        if (q.until !== undefined) where.push(`at < ${v.int(q.until)}`)
        if (q.actor !== undefined) {
          const actor = v.string(q.actor)
          where.push(`(actor_name = ${actor} OR (actor_name = '' AND actor_kind = ${actor}))`)
        }
        if (q.action !== undefined) where.push(`action = ${v.string(q.action)}`)
        if (q.env !== undefined) where.push(`env = ${v.string(q.env)}`)
        return `SELECT id, at, entry FROM ${table} FINAL WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ${Math.trunc(q.limit) + 1}`
      })
      const records: AuditRecord[] = rows
        .slice(0, q.limit)
        .map((r) => ({ id: r.id, at: Number(r.at), entry: JSON.parse(r.entry) }))
      return { records, nextCursor: rows.length > q.limit ? records[records.length - 1].id : null }
    },
  }
}
