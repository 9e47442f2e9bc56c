// Metrics of the stores (docs/operations.md, "Metrics"). ClickHouse: one observation per INSERT
// (after group commit), by table (events, runs, requests). Embedded: how far retention deleted.
import { counter, gauge, histogram, LATENCY_BUCKETS } from '../core/metrics.ts'

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

export const retentionCutoff = gauge({
  name: 'sluice_store_retention_cutoff_seconds',
  help: "Embedded, with SLUICE_EVENT_RETENTION_MS: the ID time (Unix seconds) below which the event store's last retention pass deleted every event",
})
