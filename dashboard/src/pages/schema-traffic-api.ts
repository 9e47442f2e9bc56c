// The two schema routes built from stored traffic (issue 33: draft and violations), as the shared REST
// contract has them. The page calls them only through here, so a mismatch with the server is one place to fix.
import { api, query } from '../api.ts'

export interface SchemaChange {
  op: 'add' | 'remove' | 'change'
  /** A JSON pointer into the schema: `/properties/amount/type`. */
  path: string
  from?: unknown
  to?: unknown
}

export interface SchemaDraft {
  name: string
  env: string
  /** How many stored events the proposal was inferred from. */
  sampled: number
  schema: Record<string, unknown>
  current: null | { version: number; schema: Record<string, unknown> }
  diff: SchemaChange[]
}

export interface ViolationSample {
  event_id: string
  internal_id: string
  received_at: number
  violations: string[]
}

export interface SchemaViolations {
  name: string
  env: string
  total: number
  series: Array<{ t: number; count: number }>
  /** The latest, newest first. */
  samples: ViolationSample[]
  /** Embedded mode read its bound of events: the counts cover the newest part of the range. */
  truncated?: boolean
}

const schemaPath = (name: string) => `/v1/schemas/${encodeURIComponent(name)}`

/** A proposed schema from the name's stored events; saves nothing (PUT saves it). */
export async function draftSchema(name: string, env: string, options: { limit?: number } = {}): Promise<SchemaDraft> {
  const body = options.limit === undefined ? {} : { limit: options.limit }
  return (await api<{ data: SchemaDraft }>('POST', `${schemaPath(name)}/draft${query({ env })}`, body)).data
}

/** Violations of the name's stored events since `since` (ms; the server's default: 24 h ago), by bucket. */
export async function schemaViolations(
  name: string,
  env: string,
  range: { since?: number; bucketMs?: number } = {},
): Promise<SchemaViolations> {
  const params = query({ env, since: range.since, bucket: range.bucketMs })
  return (await api<{ data: SchemaViolations }>('GET', `${schemaPath(name)}/violations${params}`)).data
}
