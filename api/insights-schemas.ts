// The shapes of `/v1/insights` (api/insights.ts), declared once like api/schemas.ts.
import { Type } from '@sinclair/typebox'
import { Nullable } from './schemas.ts'

const TimeQuery = (description: string) =>
  Type.Optional(Type.String({ description: `${description}: milliseconds or ISO 8601` }))

export const RangeQuery = Type.Object({
  from: TimeQuery('Received from (inclusive; default: an hour before `to`)'),
  to: TimeQuery('Received before (default: now)'),
  env: Type.Optional(Type.String({ description: 'One environment (default: all)' })),
})

export const EventCountsQuery = Type.Object({
  ...RangeQuery.properties,
  name: Type.Optional(Type.String({ description: 'Only this event name' })),
  top: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 20, default: 5, description: 'Names with a series of their own' }),
  ),
})

const Range = {
  from: Type.Integer({ description: 'Start of the range, milliseconds' }),
  to: Type.Integer({ description: 'End of the range (exclusive), milliseconds' }),
  env: Nullable(Type.String()),
  truncated: Type.Boolean({
    description: 'The embedded store read as much as one aggregate may: the counts cover part of the range',
  }),
}

const Counts = {
  total: Type.Integer(),
  counts: Type.Array(Type.Integer(), { description: 'One count per bucket' }),
}

export const EventCounts = Type.Object(
  {
    ...Range,
    bucket_ms: Type.Integer({ description: 'Width of a bucket: 60000 up to 6 hours, wider beyond' }),
    buckets: Type.Array(Type.Integer(), { description: 'Start of each bucket, milliseconds, ascending' }),
    series: Type.Array(Type.Object({ name: Type.String(), ...Counts }), {
      description: 'The most frequent names, most frequent first',
    }),
    other: Nullable(Type.Object(Counts, { description: 'Every other name, summed' })),
  },
  { description: 'Accepted events (not deduplicated ones) per bucket of receive time and name' },
)

export const WebhookFailures = Type.Object({
  ...Range,
  rows: Type.Array(
    Type.Object({
      webhook_id: Type.String(),
      webhook_name: Type.String(),
      code: Type.String({ description: 'The error code the request was dead-lettered with (docs/errors.md)' }),
      count: Type.Integer(),
    }),
  ),
})

export const RunOutcomes = Type.Object({
  ...Range,
  rows: Type.Array(
    Type.Object({
      function_id: Type.String({ description: '<app id>-<function id>' }),
      status: Type.String(),
      count: Type.Integer(),
    }),
  ),
})

export const InsightsInfo = Type.Object({
  sql: Nullable(
    Type.Object(
      {
        clickhouse_version: Type.String(),
        database: Type.String({ description: 'The default database of a query: its tables need no prefix' }),
        max_rows: Type.Integer({ description: 'SLUICE_INSIGHTS_MAX_ROWS: rows past it are cut' }),
        max_result_bytes: Type.Integer({ description: 'SLUICE_INSIGHTS_MAX_RESULT_BYTES' }),
        timeout_seconds: Type.Integer({ description: 'SLUICE_INSIGHTS_QUERY_TIMEOUT_SECONDS' }),
      },
      { description: 'Read-only SQL over ClickHouse; null in embedded mode' },
    ),
  ),
  max_range_ms: Type.Integer({ description: 'The longest range an aggregate covers' }),
})

export const SqlBody = Type.Object(
  {
    sql: Type.String({
      minLength: 1,
      maxLength: 100_000,
      description: 'One SELECT (or WITH … SELECT) query; tables as in docs/clickhouse.md, a final ";" allowed',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ sql: 'SELECT name, count() AS events FROM events FINAL GROUP BY name ORDER BY events DESC' }],
  },
)

export const SqlResult = Type.Object({
  columns: Type.Array(Type.Object({ name: Type.String(), type: Type.String({ description: 'ClickHouse type' }) })),
  rows: Type.Array(Type.Array(Type.Unknown()), {
    description: "One array per row, values as ClickHouse's JSON writes them (64-bit integers as strings)",
  }),
  truncated: Type.Boolean({ description: 'More rows matched than SLUICE_INSIGHTS_MAX_ROWS: the rest were cut' }),
  elapsed_ms: Type.Integer(),
  rows_read: Type.Integer(),
  bytes_read: Type.Integer(),
})
