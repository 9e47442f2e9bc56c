// Every read of the ClickHouse stores goes through one `select`: it binds values the way the
// server takes them (sqlValues) and bounds what one query may cost, so no REST query, however
// broad (an unfiltered listing reads the whole table under FINAL), runs unbounded.
import type { ClickHouseClient } from '@clickhouse/client'
import { SluiceError } from '../core/errors.ts'
import { sqlValues, type SqlValues } from './clickhouse-sql.ts'

export interface ServerInfo {
  /** As the server reports it, e.g. `18.16.1` or `26.9.2.1`. */
  version: string
  /** `{name:Type}` placeholders with query_params over HTTP: absent on 18.16. */
  queryParams: boolean
}

/**
 * Query parameters over HTTP came with the 19.x releases; 20.1 is a floor every such server
 * passes (18.16 and 19.x without them take the literal path, which is right on all).
 */
const QUERY_PARAMS_SINCE_MAJOR = 20

/** Asked once at start: the server's features decide how each query is written. */
export async function serverInfo(client: ClickHouseClient): Promise<ServerInfo> {
  const result = await client.query({ query: 'SELECT version() AS version', format: 'JSONEachRow' })
  const [{ version }] = await result.json<{ version: string }>()
  const major = Number.parseInt(version, 10)
  return { version, queryParams: major >= QUERY_PARAMS_SINCE_MAJOR }
}

export interface QueryLimits {
  /** ClickHouse's max_execution_time: a query running longer is cancelled. */
  queryTimeoutSeconds: number
  /** ClickHouse's max_rows_to_read: a query that would read more rows fails at once. */
  maxRowsToRead: number
}

/** A read: `build` writes the SQL, every value through the SqlValues it is handed. */
export type Select = <Row>(build: (values: SqlValues) => string) => Promise<Row[]>

/**
 * A read under FINAL: `fixed` conditions test only columns no newer version changes and go
 * inside, `current` ones (a status) apply outside, to the newest version; `tail` orders and limits.
 */
export interface FinalFilters {
  fixed: string[]
  current: string[]
  tail: string
}

// ClickHouse's codes for the two limits (the same numbers on 18.16 and 26.9).
const TOO_MANY_ROWS = '158'
const TIMEOUT_EXCEEDED = '159'

export function createSelect(client: ClickHouseClient, server: ServerInfo, limits: QueryLimits): Select {
  const clickhouse_settings = {
    max_execution_time: limits.queryTimeoutSeconds,
    max_rows_to_read: String(limits.maxRowsToRead),
    // The server buffers the result and answers only when the query ended, so a limit hit
    // midway is an HTTP error, not a 200 whose body breaks off in an exception text.
    wait_end_of_query: 1,
  } as const
  return async <Row>(build: (values: SqlValues) => string) => {
    const values = sqlValues(server.queryParams)
    const query = build(values)
    try {
      const params = values.params
      const result = await client.query({ query, query_params: params, format: 'JSONEachRow', clickhouse_settings })
      return await result.json<Row>()
    } catch (err) {
      throw overLimit(err, limits) ?? err
    }
  }
}

/**
 * The server's error code: the client parses it out of current releases' messages
 * (`Code: 159. DB::Exception: …`), not out of 18.16's (`Code: 159, e.displayText() = …`).
 */
export function serverErrorCode(err: unknown): string | undefined {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown }
  if (typeof code === 'string') return code
  return typeof message === 'string' ? /^Code: (\d+)[.,]/.exec(message)?.[1] : undefined
}

function overLimit(err: unknown, limits: QueryLimits): SluiceError | undefined {
  const code = serverErrorCode(err)
  if (code !== TOO_MANY_ROWS && code !== TIMEOUT_EXCEEDED) return undefined
  const what =
    code === TOO_MANY_ROWS
      ? `would read more than ${limits.maxRowsToRead} rows (clickhouseMaxRowsToRead)`
      : `ran longer than ${limits.queryTimeoutSeconds} s (clickhouseQueryTimeoutSeconds)`
  return new SluiceError(
    'QUERY_TOO_COSTLY',
    `the query ${what}; narrow it with more filters or a shorter time window`,
    { cause: err },
  )
}
