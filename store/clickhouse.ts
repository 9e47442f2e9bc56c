// The distributed mode's event, run and webhook-request stores: one ClickHouse client
// shared by the three, and the schema created (idempotently) before any of them is used.
// Only store/clickhouse* may import @clickhouse/client (DESIGN.md).
import { createClient } from '@clickhouse/client'
import type { Logger } from 'pino'
import { SluiceError } from '../core/errors.ts'
import type { EventStore } from './types.ts'
import type { RunStore } from './runs-types.ts'
import type { WebhookRequestStore } from './requests-types.ts'
import { schemaStatements, tableNames } from './clickhouse-schema.ts'
import { sqlString } from './clickhouse-sql.ts'
import { createClickHouseEventStore, type EventRow } from './clickhouse-events.ts'
import { createClickHouseRunStore, type RunRow } from './clickhouse-runs.ts'
import { createClickHouseRequestStore, type RequestRow } from './clickhouse-requests.ts'
import { createInsertBatcher, keepNewest } from './clickhouse-batcher.ts'
import { createSelect, type QueryLimits, type ServerInfo, serverInfo } from './clickhouse-read.ts'
import { insertDuration, insertedRows, insertFailures } from './metrics.ts'

/**
 * Group commit's bounds: ClickHouse likes INSERTs of thousands to a few hundred thousand
 * rows; the cap keeps one request's body in the tens of MB, and calls from the threshold up
 * are already good INSERTs, sent at once (bench/clickhouse/insert.ts, 1000 rows a call).
 */
const MAX_INSERT_ROWS = 50_000
const DIRECT_INSERT_ROWS = 1000

export interface ClickHouseConfig {
  /** HTTP interface, e.g. `http://user:password@127.0.0.1:8123`; no path (the database goes in `database`). */
  url: string
  /** Created if missing. Letters, digits and underscores. */
  database: string
  /** Credentials outside the URL (so the URL can be logged). */
  username?: string
  password?: string
  /** PEM of the CA that signed an https server's certificate (a private CA). */
  caCert?: string
  /**
   * Join concurrent writes to a table into one INSERT (default true). false sends one
   * INSERT per call, all at once: bench/clickhouse/insert.ts compares the two.
   */
  groupCommit?: boolean
  /** What one read may cost (the config's clickhouse settings): over it, QUERY_TOO_COSTLY. */
  limits: QueryLimits
}

export interface ClickHouseStores {
  events: EventStore
  runs: RunStore
  requests: WebhookRequestStore
  /** Whether the server answers now (readiness). */
  reachable(): Promise<boolean>
  /** Ends the shared client; the stores' own close() leave it to this. */
  close(): Promise<void>
}

export async function createClickHouseStores(config: ClickHouseConfig, log: Logger): Promise<ClickHouseStores> {
  const statements = schemaStatements(config.database) // validates the name before connecting
  const tables = tableNames(config.database)
  const { limits } = config
  // The client's own timeout (30 s by default) must not cut a read short of the server's
  // limit, or a slow read would end as a bare socket error instead of QUERY_TOO_COSTLY.
  const requestTimeoutMs = Math.max(30_000, (limits.queryTimeoutSeconds + 5) * 1000)
  const client = createClient({
    url: config.url,
    request_timeout: requestTimeoutMs,
    ...(config.username !== undefined && { username: config.username, password: config.password ?? '' }),
    ...(config.caCert !== undefined && { tls: { ca_cert: Buffer.from(config.caCert) } }),
  })
  let server: ServerInfo
  try {
    server = await serverInfo(client)
    for (const query of statements) {
      // Check, then alter: a refused ADD COLUMN would be logged at ERROR by the client on every start.
      if (await hasColumn(client, query)) continue
      await client.command({ query }).catch((err) => columnExists(query, err))
    }
  } catch (err) {
    await client.close()
    throw startupError(err, config)
  }
  const { version, queryParams } = server
  log.info({ database: config.database, version, queryParams }, 'clickhouse schema ready')
  const select = createSelect(client, server, limits)

  // Group commit per table (clickhouse-batcher.ts): fewer, larger INSERTs, so fewer parts to merge
  // (bench/clickhouse/insert.ts measures it).
  const writer = <Row>(
    name: 'events' | 'runs' | 'requests',
    keyOf: (row: Row) => string,
    versionOf: (row: Row) => number,
  ) => {
    const table = tables[name]
    const insert = async (rows: Row[]) => {
      const values = keepNewest(rows, keyOf, versionOf)
      const ended = insertDuration.startTimer({ table: name })
      try {
        await client.insert({ table, values, format: 'JSONEachRow' })
      } catch (err) {
        insertFailures.inc({ table: name })
        throw err
      }
      ended()
      insertedRows.inc({ table: name }, values.length)
    }
    return config.groupCommit === false
      ? insert
      : createInsertBatcher(insert, { maxRows: MAX_INSERT_ROWS, directRows: DIRECT_INSERT_ROWS })
  }

  return {
    events: createClickHouseEventStore({
      select,
      tables,
      write: writer<EventRow>(
        'events',
        (r) => r.internal_id,
        () => 0,
      ),
    }),
    runs: createClickHouseRunStore({
      select,
      tables,
      write: writer<RunRow>(
        'runs',
        (r) => r.run_id,
        (r) => Number(r.version),
      ),
    }),
    requests: createClickHouseRequestStore({
      client,
      select,
      tables,
      log,
      write: writer<RequestRow>(
        'requests',
        (r) => `${r.webhook_id}\0${r.request_id}`,
        (r) => r.attempt,
      ),
    }),
    reachable: async () => (await client.ping()).success,
    close: () => client.close(),
  }
}

// 192 UNKNOWN_USER, 193 WRONG_PASSWORD (18.16); 516 AUTHENTICATION_FAILED (current releases).
const AUTH_CODES = new Set(['192', '193', '516'])
const UNTRUSTED = /SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|CERT_HAS_EXPIRED|ERR_TLS_CERT_ALTNAME_INVALID/

/** A refused login or certificate names the setting to fix; other failures pass through. */
function startupError(err: unknown, config: ClickHouseConfig): unknown {
  const e = err as { code?: string; message?: string }
  const where = new URL(config.url).host
  if (AUTH_CODES.has(String(e.code)) || /password|authentication failed/i.test(e.message ?? '')) {
    const setting = 'clickhouseUser / clickhousePassword (SLUICE_CLICKHOUSE_USER / SLUICE_CLICKHOUSE_PASSWORD)'
    const message = `${setting}: ClickHouse at ${where} refused user ${config.username ?? 'default'}`
    return new SluiceError('CREDENTIALS_REJECTED', message, { cause: err })
  }
  if (UNTRUSTED.test(`${e.code} ${e.message}`)) {
    const setting = 'clickhouseCaFile (--clickhouse-ca-file / SLUICE_CLICKHOUSE_CA_FILE)'
    const message = `${setting}: the certificate of ClickHouse at ${where} is not trusted`
    return new SluiceError('CERTIFICATE_UNTRUSTED', message, { cause: err })
  }
  return err
}

const ADD_COLUMN = /^ALTER TABLE `(\w+)`\.(\w+) ADD COLUMN (\w+) /

/** Whether `query` adds a column the table has already (18.16 has no ADD COLUMN IF NOT EXISTS). */
async function hasColumn(client: ReturnType<typeof createClient>, query: string): Promise<boolean> {
  const added = ADD_COLUMN.exec(query)
  if (!added) return false
  const [, database, table, column] = added
  const result = await client.query({
    // Literals, not query parameters: 18.16 has none.
    query: `SELECT count() AS n FROM system.columns
WHERE database = ${sqlString(database)} AND table = ${sqlString(table)} AND name = ${sqlString(column)}`,
    format: 'JSONEachRow',
  })
  const [row] = await result.json<{ n: string | number }>()
  return Number(row.n) > 0
}

/**
 * An `ADD COLUMN` refused as done already: another node added it between the check and the alter
 * (18.16 and current releases word it alike).
 */
function columnExists(query: string, err: unknown): void {
  if (
    /^ALTER TABLE .* ADD COLUMN /.test(query) &&
    /column with this name already exists/.test(String((err as Error)?.message))
  )
    return
  throw err
}
