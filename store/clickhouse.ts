// The distributed mode's event, run and webhook-request stores: one ClickHouse client
// shared by the three, and the schema created (idempotently) before any of them is used.
// Only store/clickhouse* may import @clickhouse/client (DESIGN.md).
import { type ClickHouseSettings, createClient } from '@clickhouse/client'
import type { AuditStore } from './audit-types.ts'
import { createClickHouseAuditStore } from './clickhouse-audit.ts'
import type { Logger } from 'pino'
import { SluiceError } from '../core/errors.ts'
import type { EventStore } from './types.ts'
import type { RunStore } from './runs-types.ts'
import type { WebhookRequestStore } from './requests-types.ts'
import { tableNames } from './clickhouse-schema.ts'
import { layoutSteps } from './clickhouse-cluster-schema.ts'
import {
  applySchema,
  clusterInfo,
  clusterInsertSettings,
  deduplicationToken,
  effectiveQuorum,
  usesDeduplicationToken,
} from './clickhouse-layout.ts'
import { createClickHouseEventStore, type EventRow } from './clickhouse-events.ts'
import { createClickHouseRunStore, type RunRow } from './clickhouse-runs.ts'
import { createClickHouseRequestStore, type RequestRow } from './clickhouse-requests.ts'
import { createInsertBatcher, keepNewest } from './clickhouse-batcher.ts'
import { createSelect, type QueryLimits, type ServerInfo, serverErrorCode, serverInfo } from './clickhouse-read.ts'
import { insertDuration, insertedRows, insertFailures } from './metrics.ts'
import { clickHouseRetention } from './clickhouse-retention.ts'
import type { RetentionStore } from './retention-types.ts'
import { createClickHouseErasure } from './clickhouse-erasure.ts'
import type { ErasureStore } from './erasure-types.ts'

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
  /**
   * The cluster (a name in the servers' remote_servers) to create the tables on: replicated local
   * tables and a Distributed table over each (clickhouse-cluster-schema.ts). Unset: one server.
   */
  cluster?: string
  /** Replicas that must have each insert on a cluster; 0: a majority of the smallest shard's. */
  insertQuorum?: number
}

export interface ClickHouseStores {
  events: EventStore
  runs: RunStore
  requests: WebhookRequestStore
  /** Retention per environment: ALTER … DELETE mutations (clickhouse-retention.ts). */
  retention: RetentionStore
  /** Erasure of one person's data: mutations, waited for (clickhouse-erasure.ts). */
  erasure: ErasureStore
  /** The audit log (clickhouse-audit.ts). */
  audit: AuditStore
  /** Whether the server answers now (readiness). */
  reachable(): Promise<boolean>
  /** Why the store cannot write, from the last insert's failure until an insert succeeds (readiness). */
  writeFailure(): string | undefined
  /** Ends the shared client; the stores' own close() leave it to this. */
  close(): Promise<void>
}

export async function createClickHouseStores(config: ClickHouseConfig, log: Logger): Promise<ClickHouseStores> {
  const { cluster } = config
  const steps = layoutSteps(config.database, cluster) // validates the names before connecting
  const tables = tableNames(config.database, cluster)
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
  let insertSettings: ClickHouseSettings = {}
  let created: number
  try {
    server = await serverInfo(client)
    if (cluster !== undefined) {
      const quorum = effectiveQuorum(config.insertQuorum ?? 0, await clusterInfo(client, cluster))
      insertSettings = clusterInsertSettings(quorum)
    }
    created = await applySchema(client, config.database, steps)
  } catch (err) {
    await client.close()
    throw startupError(err, config)
  }
  const { version, queryParams } = server
  const layout = cluster === undefined ? { layout: 'one server' } : { layout: 'cluster', cluster, insertSettings }
  log.info({ database: config.database, version, queryParams, ...layout, created }, 'clickhouse schema ready')
  const token = cluster !== undefined && usesDeduplicationToken(version)
  let failure: { table: string; code: string } | undefined
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
      const clickhouse_settings = token
        ? {
            ...insertSettings,
            insert_deduplication_token: deduplicationToken(values.map((r) => `${keyOf(r)}\0${versionOf(r)}`)),
          }
        : insertSettings
      try {
        await client.insert({ table, values, format: 'JSONEachRow', clickhouse_settings })
      } catch (err) {
        insertFailures.inc({ table: name })
        failure = { table: name, code: serverErrorCode(err) ?? 'none: no answer' }
        throw err
      }
      failure = undefined
      ended()
      insertedRows.inc({ table: name }, values.length)
    }
    // 18.16 takes one quorum insert into a table at a time ("Another quorum insert has been already
    // started", code 286): with a quorum, every call of this process waits its turn in the batcher.
    const directRows = insertSettings.insert_quorum === undefined ? DIRECT_INSERT_ROWS : Number.POSITIVE_INFINITY
    return config.groupCommit === false ? insert : createInsertBatcher(insert, { maxRows: MAX_INSERT_ROWS, directRows })
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
      insertSettings,
      log,
      write: writer<RequestRow>(
        'requests',
        (r) => `${r.webhook_id}\0${r.request_id}`,
        (r) => r.attempt,
      ),
    }),
    retention: clickHouseRetention(client, config.database, tables),
    erasure: createClickHouseErasure(client, config.database, tables),
    audit: createClickHouseAuditStore({ client, select, tables, insertSettings }),
    reachable: async () => (await client.ping()).success,
    // The ClickHouse error code only: its message may quote rows.
    writeFailure: () => failure && `cannot write to ${failure.table} (ClickHouse code ${failure.code})`,
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
