// The ClickHouse schema, as the statements run at start (docs/clickhouse.md shows them
// verbatim and tests/docs-clickhouse.test.ts checks it does). Written for 18.16 and current
// releases alike: no DateTime64 (absent on 18.16: times are UInt64 milliseconds, with a
// MATERIALIZED DateTime beside them for partitions and analysts), no LowCardinality (needs
// an experimental setting on 18.16), no data-skipping indexes (absent on 18.16; the *_keys
// tables do their job for point lookups).
import { sqlIdentifier } from './clickhouse-sql.ts'

export interface TableNames {
  events: string
  eventKeys: string
  runs: string
  runKeys: string
  requests: string
  removedWebhooks: string
}

export function tableNames(database: string): TableNames {
  const db = sqlIdentifier(database)
  return {
    events: `${db}.events`,
    eventKeys: `${db}.event_keys`,
    runs: `${db}.runs`,
    runKeys: `${db}.run_keys`,
    requests: `${db}.webhook_requests`,
    removedWebhooks: `${db}.removed_webhooks`,
  }
}

// Clamped to the last second of 2099: a caller's `ts` may be any safe integer, releases
// differ in what they make of one past DateTime's range (wrap, saturate), and 18.16's date
// tables already end in 2105 (toDateTime(4294967295) prints 1970-01-01 06:28:15 there).
const seconds = (ms: string) => `toDateTime(least(intDiv(${ms}, 1000), 4102444799))`

/**
 * Every statement is idempotent (`IF NOT EXISTS`; an added column that exists is refused, and the
 * store takes that as done), so each process runs them all at start.
 */
export function schemaStatements(database: string): string[] {
  const db = sqlIdentifier(database)
  const t = tableNames(database)
  return [
    `CREATE DATABASE IF NOT EXISTS ${db}`,

    `CREATE TABLE IF NOT EXISTS ${t.events} (
    internal_id String,
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
    received_time DateTime MATERIALIZED ${seconds('received_at')}
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(received_time)
ORDER BY (env, name, internal_id)`,

    // warn mode's schema violations (docs/schemas.md), for analysts to filter on: `notEmpty(schema_violations)`.
    // Added after the table, like runs.event_ids: 18.16 has no ADD COLUMN IF NOT EXISTS.
    `ALTER TABLE ${t.events} ADD COLUMN schema_violations Array(String) DEFAULT []`,

    // Point lookups by internal ID or dedup ID: two rows per event (key = internal_id, key = id)
    // giving the events table's full sorting key, so the lookup reads a few granules there.
    // Partitioned like events, so that retention drops the same months from both; by an
    // expression, not a MATERIALIZED column: 18.16 makes a view fill those ("Expected column").
    `CREATE TABLE IF NOT EXISTS ${t.eventKeys} (
    key String,
    internal_id String,
    env String,
    name String,
    received_at UInt64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(${seconds('received_at')})
ORDER BY (key, internal_id)`,

    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.event_keys_mv TO ${t.eventKeys} AS
SELECT key, internal_id, env, name, received_at
FROM ${t.events}
ARRAY JOIN [internal_id, id] AS key`,

    `CREATE TABLE IF NOT EXISTS ${t.runs} (
    run_id String,
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
    queued_time DateTime MATERIALIZED ${seconds('queued_at')}
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(queued_time)
ORDER BY (function_id, run_id)`,

    `CREATE TABLE IF NOT EXISTS ${t.runKeys} (
    key String,
    function_id String,
    run_id String,
    queued_at UInt64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(${seconds('queued_at')})
ORDER BY (key, run_id)`,

    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.run_keys_mv TO ${t.runKeys} AS
SELECT key, function_id, run_id, queued_at
FROM ${t.runs}
ARRAY JOIN [run_id, event_id] AS key`,

    // A batch run's events (batchEvents), every one of which lists the run. Added after the table:
    // a column added to a table that has it already is refused, which the store takes as done.
    `ALTER TABLE ${t.runs} ADD COLUMN event_ids Array(String) DEFAULT []`,

    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.run_event_keys_mv TO ${t.runKeys} AS
SELECT key, function_id, run_id, queued_at
FROM ${t.runs}
ARRAY JOIN event_ids AS key`,

    `CREATE TABLE IF NOT EXISTS ${t.requests} (
    webhook_id String,
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
    received_time DateTime MATERIALIZED ${seconds('received_at')}
) ENGINE = ReplacingMergeTree(attempt)
PARTITION BY toYYYYMM(received_time)
ORDER BY (webhook_id, request_id)`,

    // Tombstones: a deleted webhook's requests disappear from reads at once, while the
    // ALTER … DELETE mutation that erases them runs in the background.
    `CREATE TABLE IF NOT EXISTS ${t.removedWebhooks} (
    webhook_id String,
    removed_at UInt64
) ENGINE = ReplacingMergeTree()
ORDER BY webhook_id`,
  ]
}
