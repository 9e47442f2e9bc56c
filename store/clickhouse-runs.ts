// RunStore on ClickHouse. Every snapshot of a run is a row of `runs`, a
// ReplacingMergeTree(version) keyed by (function_id, run_id): FINAL reads the highest
// version, which is what the RocksDB adapter keeps, whatever order snapshots arrived in.
import type { RunDoc, RunError, RunPage, RunQuery, RunStatus, RunStore, StepDoc } from './runs-types.ts'
import type { TableNames } from './clickhouse-schema.ts'
import type { FinalFilters, Select } from './clickhouse-read.ts'
import { whereClause, type SqlValues } from './clickhouse-sql.ts'

export interface RunRow {
  run_id: string
  function_id: string
  env: string
  event_id: string
  event_name: string
  status: string
  attempts: number
  steps: string
  output: string | null
  error: string | null
  next_attempt_at: number | string | null
  queued_at: number | string
  started_at: number | string | null
  ended_at: number | string | null
  version: number | string
  event_ids: string[]
}

const COLUMNS =
  'run_id, function_id, env, event_id, event_name, status, attempts, steps, output, error, next_attempt_at, queued_at, started_at, ended_at, version, event_ids'

export function runToRow(run: RunDoc): RunRow {
  const {
    runId,
    functionId,
    env,
    eventId,
    eventName,
    status,
    attempts,
    steps,
    output,
    error,
    nextAttemptAt,
    queuedAt,
    startedAt,
    endedAt,
    version,
    eventIds,
    ...unmapped
  } = run
  // Compile-time guard: a field added to RunDoc fails here instead of being dropped silently.
  const nothingLeft: Record<string, never> = unmapped
  void nothingLeft
  return {
    run_id: runId,
    function_id: functionId,
    env,
    event_id: eventId,
    event_name: eventName,
    status,
    attempts,
    steps: JSON.stringify(steps),
    // NULL is "absent"; a function that returned null stores the JSON text 'null'.
    output: output === undefined ? null : JSON.stringify(output),
    error: error === undefined ? null : JSON.stringify(error),
    next_attempt_at: nextAttemptAt ?? null,
    queued_at: queuedAt,
    started_at: startedAt ?? null,
    ended_at: endedAt ?? null,
    version,
    event_ids: eventIds ?? [],
  }
}

function rowToRun(row: RunRow): RunDoc {
  return {
    runId: row.run_id,
    functionId: row.function_id,
    env: row.env,
    eventId: row.event_id,
    eventName: row.event_name,
    status: row.status as RunStatus,
    attempts: row.attempts,
    steps: JSON.parse(row.steps) as StepDoc[],
    ...(row.output !== null && { output: JSON.parse(row.output) as unknown }),
    ...(row.error !== null && { error: JSON.parse(row.error) as RunError }),
    ...(row.next_attempt_at !== null && { nextAttemptAt: Number(row.next_attempt_at) }),
    queuedAt: Number(row.queued_at),
    ...(row.started_at !== null && { startedAt: Number(row.started_at) }),
    ...(row.ended_at !== null && { endedAt: Number(row.ended_at) }),
    version: Number(row.version),
    ...(row.event_ids?.length > 0 && { eventIds: row.event_ids }),
  }
}

export interface ClickHouseRunStoreDeps {
  select: Select
  tables: TableNames
  /** Writes rows (batched, newest version per run kept: see clickhouse.ts). */
  write(rows: RunRow[]): Promise<void>
}

export function createClickHouseRunStore(deps: ClickHouseRunStoreDeps): RunStore {
  const { tables } = deps

  /** The runs whose run ID or event ID is `key`, by the full sorting key of `runs`. */
  const byKey = (v: SqlValues, key: string) =>
    `(function_id, run_id) IN (SELECT function_id, run_id FROM ${tables.runKeys} WHERE key = ${v.string(key)})`

  /**
   * `fixed` may only test columns that never change over a run's snapshots: they apply under
   * FINAL, and a condition that runs as PREWHERE there filters rows before they collapse
   * (18.16 returns a stale `queued` snapshot for `FINAL PREWHERE status = 'queued'`). Neither
   * 18.16 nor current releases move WHERE to PREWHERE under FINAL by default, but settings
   * can; status changes, so `current` filters apply outside, to the newest snapshot.
   */
  async function select(filters: (v: SqlValues) => FinalFilters): Promise<RunDoc[]> {
    const rows = await deps.select<RunRow>((v) => {
      const { fixed, current, tail } = filters(v)
      const inner = `SELECT ${COLUMNS} FROM ${tables.runs} FINAL ${whereClause(fixed)}`
      return `SELECT ${COLUMNS} FROM (${inner}) ${whereClause(current)} ${tail}`
    })
    return rows.map(rowToRun)
  }

  return {
    async upsertRuns(runs) {
      if (runs.length === 0) return
      await deps.write(runs.map(runToRow))
    },

    async getRun(runId) {
      const [run] = await select((v) => ({
        fixed: [byKey(v, runId), `run_id = ${v.string(runId)}`],
        current: [],
        tail: 'LIMIT 1',
      }))
      return run ?? null
    },

    async queryRuns(q: RunQuery): Promise<RunPage> {
      if (q.limit <= 0) return { runs: [], nextCursor: null }
      const runs = await select((v) => {
        const fixed: string[] = []
        if (q.eventId !== undefined)
          fixed.push(
            byKey(v, q.eventId),
            `(event_id = ${v.string(q.eventId)} OR has(event_ids, ${v.string(q.eventId)}))`,
          )
        if (q.functionId !== undefined) fixed.push(`function_id = ${v.string(q.functionId)}`)
        if (q.env !== undefined) fixed.push(`env = ${v.string(q.env)}`)
        if (q.cursor !== undefined) fixed.push(`run_id < ${v.string(q.cursor)}`)
        const current = q.status !== undefined ? [`status = ${v.string(q.status)}`] : []
        return { fixed, current, tail: `ORDER BY run_id DESC LIMIT ${v.int(q.limit + 1)}` }
      })
      if (runs.length <= q.limit) return { runs, nextCursor: null }
      const page = runs.slice(0, q.limit)
      return { runs: page, nextCursor: page[page.length - 1].runId }
    },

    close: async () => {},
  }
}
