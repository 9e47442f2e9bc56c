// The ClickHouse schema, as the statements run at start (docs/clickhouse.md shows them
// verbatim and tests/docs-clickhouse.test.ts checks it does). Written for 18.16 and current
// releases alike: no DateTime64 (absent on 18.16: times are UInt64 milliseconds, with a
// MATERIALIZED DateTime beside them for partitions and analysts), no LowCardinality (needs
// an experimental setting on 18.16), no data-skipping indexes (absent on 18.16; the *_keys
// tables do their job for point lookups). Two layouts of the same tables: one server (below, as
// ever), or a cluster (clickhouse-cluster-schema.ts), chosen by clickhouseCluster.
import { sqlIdentifier } from './clickhouse-sql.ts'

/** What the stores read and write. On a cluster, reads and inserts name the Distributed tables. */
export interface TableNames {
  events: string
  /** Read only inside an `IN` under a read of `events`: on a cluster the shard's own table (see cluster schema). */
  eventKeys: string
  runs: string
  /** As eventKeys, under a read of `runs`. */
  runKeys: string
  requests: string
  removedWebhooks: string
  /** The audit log (docs/teams.md). */
  audit: string
  /** The table an `ALTER … DELETE` of requests names, with its `ON CLUSTER` where there is one. */
  requestsMutation: string
  /** `GLOBAL ` on a cluster, for a subquery on a table that is not sharded with the outer one. */
  global: string
}

export function tableNames(database: string, cluster?: string): TableNames {
  const db = sqlIdentifier(database)
  if (cluster !== undefined) {
    return {
      events: `${db}.events`,
      eventKeys: `${db}.event_keys_local`,
      runs: `${db}.runs`,
      runKeys: `${db}.run_keys_local`,
      requests: `${db}.webhook_requests`,
      removedWebhooks: `${db}.removed_webhooks`,
      audit: `${db}.audit_log`,
      requestsMutation: `${db}.webhook_requests_local ON CLUSTER ${sqlIdentifier(cluster)}`,
      global: 'GLOBAL ',
    }
  }
  return {
    events: `${db}.events`,
    eventKeys: `${db}.event_keys`,
    runs: `${db}.runs`,
    runKeys: `${db}.run_keys`,
    requests: `${db}.webhook_requests`,
    removedWebhooks: `${db}.removed_webhooks`,
    audit: `${db}.audit_log`,
    requestsMutation: `${db}.webhook_requests`,
    global: '',
  }
}

/** A statement and what it creates, so that a start skips what exists (and no server logs an error for it). */
export interface SchemaStep {
  sql: string
  /** The table (or view) it creates or alters; '' for the database. */
  table: string
  /** The column an ALTER adds. */
  column?: string
}

// Clamped to the last second of 2099: a caller's `ts` may be any safe integer, releases
// differ in what they make of one past DateTime's range (wrap, saturate), and 18.16's date
// tables already end in 2105 (toDateTime(4294967295) prints 1970-01-01 06:28:15 there).
const seconds = (ms: string) => `toDateTime(least(intDiv(${ms}, 1000), 4102444799))`

/**
 * Every statement is idempotent (`IF NOT EXISTS`; an added column that exists is refused, and the
 * store takes that as done), and the store skips those whose table or column exists already.
 */
export function schemaStatements(database: string): string[] {
  return schemaSteps(database).map((s) => s.sql)
}

/** The one-server layout's steps; clickhouse-cluster-schema.ts has the cluster's. */
export function schemaSteps(database: string): SchemaStep[] {
  const db = sqlIdentifier(database)
  const t = tableNames(database)
  const steps: Array<[string, string, string?]> = [
    ['', `CREATE DATABASE IF NOT EXISTS ${db}`],
    ['events', createTable(t.events, TABLES.events)],
    // warn mode's schema violations (docs/schemas.md), for analysts to filter on: `notEmpty(schema_violations)`.
    // Added after the table, like runs.event_ids: 18.16 has no ADD COLUMN IF NOT EXISTS.
    ['events', `ALTER TABLE ${t.events} ADD COLUMN ${TABLES.events.added![0]}`, 'schema_violations'],
    ['event_keys', createTable(t.eventKeys, TABLES.event_keys)],
    ['event_keys_mv', view(db, 'event_keys_mv', t.eventKeys, TABLES.event_keys_mv.select(t.events))],
    ['runs', createTable(t.runs, TABLES.runs)],
    ['run_keys', createTable(t.runKeys, TABLES.run_keys)],
    ['run_keys_mv', view(db, 'run_keys_mv', t.runKeys, TABLES.run_keys_mv.select(t.runs))],
    // A batch run's events (batchEvents), every one of which lists the run. Added after the table:
    // a column added to a table that has it already is refused, which the store takes as done.
    ['runs', `ALTER TABLE ${t.runs} ADD COLUMN ${TABLES.runs.added![0]}`, 'event_ids'],
    ['run_event_keys_mv', view(db, 'run_event_keys_mv', t.runKeys, TABLES.run_event_keys_mv.select(t.runs))],
    ['webhook_requests', createTable(t.requests, TABLES.webhook_requests)],
    // Tombstones: a deleted webhook's requests disappear from reads at once, while the
    // ALTER … DELETE mutation that erases them runs in the background.
    ['removed_webhooks', createTable(t.removedWebhooks, TABLES.removed_webhooks)],
    // Who changed what through the REST API (docs/teams.md): written by the api process, kept forever.
    ['audit_log', createTable(t.audit, TABLES.audit_log)],
  ]
  return steps.map(([table, sql, column]) => ({ sql, table, ...(column && { column }) }))
}

const view = (db: string, name: string, to: string, select: string) =>
  `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${name} TO ${to} AS\n${select}`

function createTable(name: string, spec: TableSpec): string {
  const partition = spec.partition ? `\nPARTITION BY ${spec.partition}` : ''
  const engine = `ReplacingMergeTree(${spec.version ?? ''})${partition}`
  return `CREATE TABLE IF NOT EXISTS ${name} (\n${spec.columns}\n) ENGINE = ${engine}\nORDER BY ${spec.order}`
}

/** A table of the schema, the same in both layouts. */
export interface TableSpec {
  columns: string
  /** ReplacingMergeTree's version column; none: the last inserted row wins. */
  version?: string
  partition?: string
  order: string
  /** Columns added after the table was first released: `name Type DEFAULT …`. */
  added?: string[]
  /** On a cluster, the Distributed table's sharding key: one event's (run's, request's) rows on one shard. */
  shardBy: string
}

export interface ViewSpec {
  /** The table it fills (key tables), and its SELECT over the source table named. */
  to: string
  from: string
  select(source: string): string
}

const TABLES_ = {
  events: {
    columns: `    internal_id String,
    id String,
    name String,
    env String,
    ts UInt64,
    received_at UInt64,
    data String,
    source_kind String,
    source String,
    duplicate_of Nullable(String),
    event_time DateTime MATERIALIZED ${seconds('ts')},
    received_time DateTime MATERIALIZED ${seconds('received_at')}`,
    partition: 'toYYYYMM(received_time)',
    order: '(env, name, internal_id)',
    added: ['schema_violations Array(String) DEFAULT []'],
    shardBy: 'cityHash64(internal_id)',
  },
  // Point lookups by internal ID or dedup ID: two rows per event (key = internal_id, key = id)
  // giving the events table's full sorting key, so the lookup reads a few granules there.
  // Partitioned like events, so that retention drops the same months from both; by an
  // expression, not a MATERIALIZED column: 18.16 makes a view fill those ("Expected column").
  event_keys: {
    columns: `    key String,
    internal_id String,
    env String,
    name String,
    received_at UInt64`,
    partition: `toYYYYMM(${seconds('received_at')})`,
    order: '(key, internal_id)',
    shardBy: 'cityHash64(internal_id)',
  },
  runs: {
    columns: `    run_id String,
    function_id String,
    env String,
    event_id String,
    event_name String,
    status String,
    attempts UInt32,
    steps String,
    output Nullable(String),
    error Nullable(String),
    next_attempt_at Nullable(UInt64),
    queued_at UInt64,
    started_at Nullable(UInt64),
    ended_at Nullable(UInt64),
    version UInt64,
    queued_time DateTime MATERIALIZED ${seconds('queued_at')}`,
    version: 'version',
    partition: 'toYYYYMM(queued_time)',
    order: '(function_id, run_id)',
    added: ['event_ids Array(String) DEFAULT []'],
    shardBy: 'cityHash64(run_id)',
  },
  run_keys: {
    columns: `    key String,
    function_id String,
    run_id String,
    queued_at UInt64`,
    partition: `toYYYYMM(${seconds('queued_at')})`,
    order: '(key, run_id)',
    shardBy: 'cityHash64(run_id)',
  },
  webhook_requests: {
    columns: `    webhook_id String,
    request_id String,
    attempt UInt32,
    received_at UInt64,
    ip String,
    headers String,
    query String,
    body String,
    body_encoding String,
    status String,
    processed_at UInt64,
    env Nullable(String),
    event_ids Array(String),
    events String,
    error_code Nullable(String),
    error_message Nullable(String),
    received_time DateTime MATERIALIZED ${seconds('received_at')}`,
    version: 'attempt',
    partition: 'toYYYYMM(received_time)',
    order: '(webhook_id, request_id)',
    shardBy: 'cityHash64(webhook_id, request_id)',
  },
  removed_webhooks: {
    columns: `    webhook_id String,
    removed_at UInt64`,
    order: 'webhook_id',
    shardBy: 'cityHash64(webhook_id)',
  },
  audit_log: {
    columns: `    id String,
    at UInt64,
    actor_kind String,
    actor_name String,
    action String,
    env String,
    entry String,
    at_time DateTime MATERIALIZED ${seconds('at')}`,
    partition: 'toYYYYMM(at_time)',
    order: 'id',
    shardBy: 'cityHash64(id)',
  },
  event_keys_mv: {
    to: 'event_keys',
    from: 'events',
    select: (events: string) => `SELECT key, internal_id, env, name, received_at
FROM ${events}
ARRAY JOIN [internal_id, id] AS key`,
  },
  run_keys_mv: {
    to: 'run_keys',
    from: 'runs',
    select: (runs: string) => `SELECT key, function_id, run_id, queued_at
FROM ${runs}
ARRAY JOIN [run_id, event_id] AS key`,
  },
  run_event_keys_mv: {
    to: 'run_keys',
    from: 'runs',
    select: (runs: string) => `SELECT key, function_id, run_id, queued_at
FROM ${runs}
ARRAY JOIN event_ids AS key`,
  },
}
export type Tables = {
  [K in keyof typeof TABLES_]: K extends `${string}_mv` ? ViewSpec : TableSpec
}
export const TABLES: Tables = TABLES_
