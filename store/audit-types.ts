// The audit log's store (api/audit.ts writes it, docs/teams.md): entries kept apart from the events,
// so that they are read by admins only and never counted, listed or streamed as a user's events.
// Embedded: a RocksDB key space (store/audit-rocksdb.ts); distributed: the ClickHouse table
// `audit_log` (store/clickhouse-audit.ts), written by the api process that made the change.

/** One entry: `id` a ULID (time-ordered), `at` in ms, `entry` the JSON shown by GET /v1/audit. */
export interface AuditRecord {
  id: string
  at: number
  entry: AuditEntryData
}

export interface AuditEntryData {
  actor: { kind: string; name?: string; token_id?: string; user_id?: string }
  action: string
  env?: string
  [field: string]: unknown
}

export interface AuditQuery {
  /** Older than this entry's ID (the previous page's cursor). */
  before?: string
  since?: number
  until?: number
  /** A user's email, a token's name, or an actor kind without a name (signing-key, dev). */
  actor?: string
  action?: string
  env?: string
  limit: number
}

export interface AuditStore {
  /** Resolves once durable. */
  append(records: AuditRecord[]): Promise<void>
  /** Newest first; `nextCursor` while older entries may match. */
  page(q: AuditQuery): Promise<{ records: AuditRecord[]; nextCursor: string | null }>
}

export const actorMatches = (entry: AuditEntryData, actor: string) => (entry.actor.name ?? entry.actor.kind) === actor

/** Whether `r` passes the query's filters (the embedded store applies them as it scans). */
export function auditMatches(r: AuditRecord, q: AuditQuery): boolean {
  return (
    (q.since === undefined || r.at >= q.since) &&
    (q.until === undefined || r.at < q.until) &&
    (q.actor === undefined || actorMatches(r.entry, q.actor)) &&
    (q.action === undefined || r.entry.action === q.action) &&
    (q.env === undefined || r.entry.env === q.env)
  )
}
