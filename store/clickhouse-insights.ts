// Insights on ClickHouse: the aggregates as GROUP BY queries under the store's read limits, and
// the SQL console: one read statement as its own client (the database as default, so the tables
// of docs/clickhouse.md need no prefix) under readonly = 1 and the Insights caps. readonly = 1
// is what refuses writes, DDL, SET and a query's SETTINGS clause, and table functions (url(),
// file(), remote()…), on 18.16 and current releases alike; the caps are sent with every query.
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client'
import type { Readable } from 'node:stream'
import type { Logger } from 'pino'
import { SluiceError } from '../core/errors.ts'
import type { ClickHouseConfig } from './clickhouse.ts'
import { createSelect, serverInfo, type Select } from './clickhouse-read.ts'
import { tableNames } from './clickhouse-schema.ts'
import { clickHouseSchemaViolations } from './clickhouse-violations.ts'
import { type SqlValues, whereClause } from './clickhouse-sql.ts'
import { capRows, readStatement, userPositions } from './insights-sql.ts'
import {
  bucketStarts,
  type EventCounts,
  type EventCountsQuery,
  type InsightsRange,
  type InsightsStore,
  type RunOutcomeCount,
  type SqlLimits,
  type SqlResult,
  type WebhookFailureCount,
} from './insights-types.ts'

/** Marks the name slot of every event name past the top ones (names are never empty). */
const OTHER = ''

export async function createClickHouseInsights(
  config: ClickHouseConfig,
  sqlLimits: SqlLimits,
  log?: Logger,
): Promise<InsightsStore> {
  const { limits } = config
  const slowest = Math.max(limits.queryTimeoutSeconds, sqlLimits.timeoutSeconds)
  const client = createClient({
    url: config.url,
    database: config.database,
    request_timeout: Math.max(30_000, (slowest + 5) * 1000),
    // A refused query is an answer here (400 SQL_INVALID), not an error worth the client's own log line.
    log: { level: ClickHouseLogLevel.OFF },
    ...(config.username !== undefined && { username: config.username, password: config.password ?? '' }),
    ...(config.caCert !== undefined && { tls: { ca_cert: Buffer.from(config.caCert) } }),
  })
  try {
    const server = await serverInfo(client)
    log?.debug({ version: server.version }, 'clickhouse insights ready')
    const select = createSelect(client, server, limits)
    return {
      ...aggregates(select, config.database),
      schemaViolations: (q) => clickHouseSchemaViolations(select, tableNames(config.database, config.cluster), q),
      sql: {
        version: server.version,
        database: config.database,
        limits: sqlLimits,
        query: (sql) => runSql(client, sql, sqlLimits, config.cluster !== undefined),
      },
      close: () => client.close(),
    }
  } catch (err) {
    await client.close()
    throw err
  }
}

function aggregates(
  select: Select,
  database: string,
): Pick<InsightsStore, 'eventCounts' | 'webhookFailures' | 'runOutcomes'> {
  const t = tableNames(database)
  const inRange = (v: SqlValues, column: string, q: InsightsRange) => [
    `${column} >= ${v.int(q.from)}`,
    `${column} < ${v.int(q.to)}`,
  ]

  async function eventCounts(q: EventCountsQuery): Promise<EventCounts> {
    const buckets = bucketStarts(q.from, q.to, q.bucketMs)
    const where = (v: SqlValues) =>
      whereClause([
        ...inRange(v, 'received_at', q),
        'duplicate_of IS NULL',
        ...(q.env !== undefined ? [`env = ${v.string(q.env)}`] : []),
        ...(q.name !== undefined ? [`name = ${v.string(q.name)}`] : []),
      ])
    const top = await select<{ name: string }>(
      (v) =>
        `SELECT name, count() AS n FROM ${t.events} FINAL ${where(v)} GROUP BY name ORDER BY n DESC, name LIMIT ${v.int(q.top)}`,
    )
    const names = top.map((r) => r.name)
    const rows = await select<{ bucket: string; series: string; n: string }>((v) => {
      const series = names.length ? `if(name IN (${names.map((n) => v.string(n)).join(', ')}), name, '')` : `''`
      const bucket = `intDiv(received_at, ${v.int(q.bucketMs)}) * ${v.int(q.bucketMs)}`
      return `SELECT ${bucket} AS bucket, ${series} AS series, count() AS n FROM ${t.events} FINAL ${where(v)} GROUP BY bucket, series`
    })
    const index = new Map(buckets.map((b, i) => [b, i]))
    const empty = () => ({ total: 0, counts: new Array<number>(buckets.length).fill(0) })
    const byName = new Map([...names, OTHER].map((n) => [n, empty()]))
    for (const row of rows) {
      const s = byName.get(row.series)
      const i = index.get(Number(row.bucket))
      if (!s || i === undefined) continue
      s.total += Number(row.n)
      s.counts[i] += Number(row.n)
    }
    const other = byName.get(OTHER)!
    return {
      buckets,
      series: names.map((name) => ({ name, ...byName.get(name)! })),
      other: other.total > 0 ? other : null,
      truncated: false,
    }
  }

  return {
    eventCounts,

    async webhookFailures(q) {
      if (q.webhookIds.length === 0) return { rows: [], truncated: false }
      // status changes between a request's attempts: filtered outside FINAL (docs/clickhouse.md).
      const rows = await select<{ webhook_id: string; code: string; n: string }>((v) => {
        const fixed = whereClause([
          `webhook_id IN (${q.webhookIds.map((id) => v.string(id)).join(', ')})`,
          ...inRange(v, 'received_at', q),
        ])
        return `SELECT webhook_id, ifNull(error_code, 'UNKNOWN') AS code, count() AS n
FROM (SELECT webhook_id, status, error_code FROM ${t.requests} FINAL ${fixed})
WHERE status = 'failed'
GROUP BY webhook_id, code
ORDER BY n DESC, webhook_id, code`
      })
      const out: WebhookFailureCount[] = rows.map((r) => ({
        webhookId: r.webhook_id,
        code: r.code,
        count: Number(r.n),
      }))
      return { rows: out, truncated: false }
    },

    async runOutcomes(q) {
      const rows = await select<{ function_id: string; status: string; n: string }>((v) => {
        // A run's env and queue time are the same in every snapshot: inside FINAL; its status is not.
        const fixed = whereClause([
          ...inRange(v, 'queued_at', q),
          ...(q.env !== undefined ? [`env = ${v.string(q.env)}`] : []),
        ])
        return `SELECT function_id, status, count() AS n
FROM (SELECT function_id, status FROM ${t.runs} FINAL ${fixed})
GROUP BY function_id, status
ORDER BY function_id, status`
      })
      const out: RunOutcomeCount[] = rows.map((r) => ({
        functionId: r.function_id,
        status: r.status,
        count: Number(r.n),
      }))
      return { rows: out, truncated: false }
    },
  }
}

interface JsonCompact {
  meta: Array<{ name: string; type: string }>
  data: unknown[][]
  statistics?: { elapsed: number; rows_read: number; bytes_read: number }
}

/** `onCluster`: a subquery on a Distributed table inside a query on one runs once, where asked (GLOBAL). */
async function runSql(
  client: ClickHouseClient,
  sql: string,
  limits: SqlLimits,
  onCluster: boolean,
): Promise<SqlResult> {
  const statement = readStatement(sql)
  const started = performance.now()
  let body: JsonCompact
  try {
    // exec: the raw answer, read under a byte cap. JSONCompact: names and types first, rows as
    // arrays, then statistics; the same on 18.16 and current releases.
    const result = await client.exec({
      query: `${capRows(statement, limits.maxRows)}\nFORMAT JSONCompact`,
      clickhouse_settings: {
        readonly: '1',
        max_execution_time: limits.timeoutSeconds,
        max_rows_to_read: String(limits.maxRowsToRead),
        // The outer LIMIT cuts the rows exactly; these make ClickHouse itself refuse anything past
        // the caps, however the statement is written.
        max_result_rows: String(limits.maxRows + 1),
        max_result_bytes: String(limits.maxResultBytes),
        result_overflow_mode: 'throw',
        // Errors (a limit hit midway) come as an HTTP error, not a 200 whose body breaks off.
        wait_end_of_query: 1,
        ...(onCluster && { distributed_product_mode: 'global' as const }),
      },
    })
    body = JSON.parse(await boundedText(result.stream, limits))
  } catch (err) {
    throw sqlError(err, limits) ?? err
  }
  const truncated = body.data.length > limits.maxRows
  return {
    columns: body.meta.map((m) => ({ name: m.name, type: m.type })),
    rows: truncated ? body.data.slice(0, limits.maxRows) : body.data,
    truncated,
    elapsedMs: Math.round(body.statistics ? body.statistics.elapsed * 1000 : performance.now() - started),
    rowsRead: Number(body.statistics?.rows_read ?? 0),
    bytesRead: Number(body.statistics?.bytes_read ?? 0),
  }
}

/**
 * The answer's text, read no further than its cap allows: ClickHouse's max_result_bytes counts
 * the result's blocks, not its JSON, so the JSON gets room for quoting and escapes on top.
 */
async function boundedText(stream: Readable, limits: SqlLimits): Promise<string> {
  const cap = limits.maxResultBytes * 4 + 64 * 1024
  const parts: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    const part = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)
    size += part.length
    if (size > cap) {
      stream.destroy()
      throw tooLarge(limits)
    }
    parts.push(part)
  }
  return Buffer.concat(parts).toString('utf8')
}

const tooLarge = (limits: SqlLimits) =>
  new SluiceError(
    'QUERY_TOO_COSTLY',
    `body.sql: the result is over ${limits.maxResultBytes} bytes (insightsMaxResultBytes); select fewer columns or rows`,
  )

// ClickHouse's codes, the same numbers on 18.16 and current releases.
const READONLY = '164'
const COSTLY: Record<string, (limits: SqlLimits) => string> = {
  '158': (l) => `would read more than ${l.maxRowsToRead} rows (clickhouseMaxRowsToRead)`,
  '159': (l) => `ran longer than ${l.timeoutSeconds} s (insightsQueryTimeoutSeconds)`,
  '160': (l) => `ran longer than ${l.timeoutSeconds} s (insightsQueryTimeoutSeconds)`,
  '241': () => 'needs more memory than ClickHouse allows a query',
  '396': (l) => `has a result over ${l.maxResultBytes} bytes (insightsMaxResultBytes) or ${l.maxRows} rows`,
}
/** Not the query's fault: the server, the network or the login. Passed on as they are (500). */
const NOT_THE_QUERY = new Set(['192', '193', '202', '209', '210', '516'])

/** The server's code and its message without the code and stack decorations of either release. */
function serverError(err: unknown): { code: string; text: string } | undefined {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown }
  if (typeof message !== 'string') return undefined
  const number = typeof code === 'string' && /^\d+$/.test(code) ? code : /^Code: (\d+)[.,]/.exec(message)?.[1]
  if (number === undefined) return undefined
  const text = message
    .replace(/^Code: \d+[.,]\s*(e\.displayText\(\) = )?(DB::Exception: )?/, '')
    .replace(/,? e\.what\(\) = DB::Exception\s*$/, '')
    .replace(/\s*\(version [^)]*\)\s*$/, '')
    .replace(/\s*\([A-Z_]+\)\s*$/, '')
    .trim()
  return { code: number, text: userPositions(text) }
}

/** ClickHouse's refusal as an answer naming body.sql: 400 for the statement, 422 for a cap. */
function sqlError(err: unknown, limits: SqlLimits): SluiceError | undefined {
  if (err instanceof SluiceError) return err
  const e = serverError(err)
  if (!e || NOT_THE_QUERY.has(e.code)) return undefined
  if (e.code === READONLY)
    return new SluiceError('REQUEST_INVALID', `body.sql: only reads are allowed here (ClickHouse: ${e.text})`, {
      cause: err,
    })
  const costly = COSTLY[e.code]
  if (costly)
    return new SluiceError(
      'QUERY_TOO_COSTLY',
      `body.sql: the query ${costly(limits)}; narrow it (a time window, an env and name) or add a LIMIT`,
      { cause: err },
    )
  return new SluiceError('SQL_INVALID', `body.sql: ${e.text}`, { cause: err })
}
