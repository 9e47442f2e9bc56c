// Schema violations on ClickHouse: the `schema_violations` column of the name's events, counted
// by one GROUP BY (the sorting key starts with env, name), and the latest violating events.
// Written for 18.16 and current releases alike (notEmpty on an array, intDiv, no window functions).
import type { Select } from './clickhouse-read.ts'
import type { TableNames } from './clickhouse-schema.ts'
import { type SqlValues, whereClause } from './clickhouse-sql.ts'
import { bucketStarts, type SchemaViolations, type SchemaViolationsQuery } from './insights-types.ts'

export async function clickHouseSchemaViolations(
  select: Select,
  tables: TableNames,
  q: SchemaViolationsQuery,
): Promise<SchemaViolations> {
  // An event's violations are fixed by its internal ID: filtering under FINAL picks no stale copy.
  const where = (v: SqlValues) =>
    whereClause([
      `env = ${v.string(q.env)}`,
      `name = ${v.string(q.name)}`,
      `received_at >= ${v.int(q.from)}`,
      `received_at < ${v.int(q.to)}`,
      'duplicate_of IS NULL',
      'notEmpty(schema_violations)',
    ])
  const [rows, latest] = await Promise.all([
    select<{ bucket: string; n: string }>((v) => {
      const bucket = `intDiv(received_at, ${v.int(q.bucketMs)}) * ${v.int(q.bucketMs)}`
      return `SELECT ${bucket} AS bucket, count() AS n FROM ${tables.events} FINAL ${where(v)} GROUP BY bucket`
    }),
    select<{ internal_id: string; id: string; received_at: string; schema_violations: string[] }>(
      (v) =>
        `SELECT internal_id, id, received_at, schema_violations FROM ${tables.events} FINAL ${where(v)}
ORDER BY internal_id DESC LIMIT ${v.int(q.samples)}`,
    ),
  ])
  const buckets = bucketStarts(q.from, q.to, q.bucketMs)
  const index = new Map(buckets.map((b, i) => [b, i]))
  const counts = new Array<number>(buckets.length).fill(0)
  let total = 0
  for (const row of rows) {
    const i = index.get(Number(row.bucket))
    if (i === undefined) continue
    counts[i] += Number(row.n)
    total += Number(row.n)
  }
  const samples = latest.map((r) => ({
    id: r.id,
    internalId: r.internal_id,
    receivedAt: Number(r.received_at),
    violations: r.schema_violations,
  }))
  return { buckets, counts, total, samples, truncated: false }
}
