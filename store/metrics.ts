// Metrics of the ClickHouse store (docs/operations.md, "Metrics"): one observation per INSERT
// (after group commit), by table (events, runs, requests).
import { counter, histogram, LATENCY_BUCKETS } from '../core/metrics.ts'

export const insertDuration = histogram<'table'>({
  name: 'sluice_clickhouse_insert_duration_seconds',
  help: 'Time one INSERT into ClickHouse took, by table',
  labelNames: ['table'],
  buckets: LATENCY_BUCKETS,
})

export const insertedRows = counter<'table'>({
  name: 'sluice_clickhouse_inserted_rows_total',
  help: 'Rows ClickHouse acknowledged, by table',
  labelNames: ['table'],
})

export const insertFailures = counter<'table'>({
  name: 'sluice_clickhouse_insert_failures_total',
  help: 'INSERTs that failed, by table (the batch is redelivered)',
  labelNames: ['table'],
})
