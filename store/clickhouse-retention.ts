// Retention per environment in ClickHouse (store/retention-types.ts): a pass is one
// `ALTER TABLE … DELETE` per table whose condition gives each environment its own cutoff,
// `internal_id < multiIf(env = 'a', '<ULID of a's cutoff>', …, '<the default's>')`, by the IDs'
// time as in embedded mode. Why mutations and not TTL: 18.16 has no TTL (it came with 19.6; its
// parser refuses the clause), and a TTL computed at insert from a per-environment column would keep
// the retention a row was written under, so a shorter retention set later would still need a
// mutation for the rows already there. One code path serves both versions. A mutation rewrites the
// parts holding matching rows in the background, so a pass issues one only when some row matches
// and none of Sluice's is still running on that table; reads see the rows until it is done.
import type { ClickHouseClient } from '@clickhouse/client'
import { ulidFloor } from './rocksdb-index.ts'
import type { TableNames } from './clickhouse-schema.ts'
import { sqlString } from './clickhouse-sql.ts'
import { cutoffsOfKind, type RetentionKind, type RetentionPlan } from './retention-types.ts'

interface Target {
  table: string
  kind: RetentionKind
  id: string
  /** The environment column, as an expression (null: the table has none: it takes the earliest cutoff of all). */
  env: string | null
}

export function clickHouseRetention(client: ClickHouseClient, database: string, tables: TableNames) {
  const targets: Target[] = [
    { table: tables.events, kind: 'events', id: 'internal_id', env: 'env' },
    { table: tables.eventKeys, kind: 'events', id: 'internal_id', env: 'env' },
    { table: tables.runs, kind: 'runs', id: 'run_id', env: 'env' },
    { table: tables.runKeys, kind: 'runs', id: 'run_id', env: null },
    { table: tables.requests, kind: 'requests', id: 'request_id', env: "ifNull(env, '')" },
  ]

  const count = async (query: string) => {
    const result = await client.query({ query, format: 'JSONEachRow' })
    const [row] = await result.json<{ n: string | number }>()
    return Number(row?.n ?? 0)
  }

  /** Whether a mutation is still running on `table` (`db`.`name`). */
  const mutating = (table: string) =>
    count(
      `SELECT count() AS n FROM system.mutations WHERE database = ${sqlString(database)} ` +
        `AND table = ${sqlString(table.slice(table.lastIndexOf('.') + 2, -1))} AND is_done = 0`,
    ).then((n) => n > 0)

  return {
    async expire(plan: RetentionPlan, options: { signal?: AbortSignal } = {}): Promise<void> {
      for (const target of targets) {
        if (options.signal?.aborted) return
        const condition = conditionOf(plan, target)
        if (condition === undefined || (await mutating(target.table))) continue
        if ((await count(`SELECT count() AS n FROM ${target.table} WHERE ${condition}`)) === 0) continue
        await client.command({ query: `ALTER TABLE ${target.table} DELETE WHERE ${condition}` })
      }
    },
  }
}

/** The rows of `target` past their environment's cutoff; undefined when the plan deletes none. */
export function conditionOf(plan: RetentionPlan, target: Target): string | undefined {
  const below = (cutoff: number | undefined) => sqlString(cutoff === undefined ? '' : ulidFloor(cutoff))
  if (target.env === null) {
    const all = cutoffsOfKind(plan, target.kind)
    return all.includes(undefined) ? undefined : `${target.id} < ${below(Math.min(...(all as number[])))}`
  }
  if (cutoffsOfKind(plan, target.kind).every((c) => c === undefined)) return undefined
  const fallback = below(plan.fallback[target.kind])
  const branches = [...plan.envs].map(([env, c]) => `${target.env} = ${sqlString(env)}, ${below(c[target.kind])}`)
  return `${target.id} < ${branches.length === 0 ? fallback : `multiIf(${branches.join(', ')}, ${fallback})`}`
}
