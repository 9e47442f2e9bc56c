// Internal camelCase documents → the REST API's snake_case JSON.
import type { StoredEvent } from '../core/event.ts'
import type { EnvDoc, KeyDoc } from '../control/types.ts'

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())

export function presentEvent(e: StoredEvent) {
  return {
    internal_id: e.internalId,
    id: e.id,
    name: e.name,
    data: e.data,
    ts: e.ts,
    env: e.env,
    received_at: e.receivedAt,
    source: snakeKeys(e.source),
    ...(e.schemaViolations !== undefined && { schema_violations: e.schemaViolations }),
    ...(e.duplicateOf !== undefined && { deduplicated: true, duplicate_of: e.duplicateOf }),
  }
}

export function presentEnv(e: EnvDoc) {
  return {
    name: e.name,
    kind: e.kind,
    created_at: iso(e.createdAt),
    archived_at: iso(e.archivedAt),
    max_body_bytes: e.maxBodyBytes ?? null,
    max_events_per_second: e.maxEventsPerSecond ?? null,
    schema_mode: e.schemaMode ?? 'off',
    unknown_names: e.unknownNames ?? 'allow',
    retention_days: {
      events: e.retentionDays?.events ?? null,
      runs: e.retentionDays?.runs ?? null,
      requests: e.retentionDays?.requests ?? null,
    },
  }
}

export function presentKey(k: KeyDoc) {
  return { id: k.id, env: k.env, prefix: k.prefix, created_at: iso(k.createdAt), revoked_at: iso(k.revokedAt) }
}

export function snakeKeys(value: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase()), v]),
  )
}
