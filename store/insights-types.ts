// Insights: counts over a time range, computed where the data is (the embedded store's indexes,
// ClickHouse's GROUP BY), never by loading the records; and, in distributed mode, read-only SQL
// over the ClickHouse tables. Domain-shaped, so both adapters implement it and one suite
// (tests/conformance/insights-suite.ts) runs on each.

/** A receive-time range `[from, to)` in milliseconds, optionally within one environment. */
export interface InsightsRange {
  from: number
  to: number
  env?: string
}

export interface EventCountsQuery extends InsightsRange {
  /** Bucket width; buckets start at multiples of it (clock minutes for 60000). */
  bucketMs: number
  /** Only this event name. */
  name?: string
  /** Names with their own series, the most frequent first; the others are summed into `other`. */
  top: number
}

export interface CountSeries {
  total: number
  /** One count per bucket of `buckets`. */
  counts: number[]
}

/** Accepted events (not deduplicated ones) per bucket and name. */
export interface EventCounts {
  /** Start of each bucket, ascending. */
  buckets: number[]
  series: Array<CountSeries & { name: string }>
  /** Every name past the top ones; null when there are none. */
  other: CountSeries | null
  /** The embedded store read as much as one aggregate may: the counts cover part of the range. */
  truncated: boolean
}

export interface WebhookFailuresQuery extends InsightsRange {
  /** The webhooks to count (the caller's, already scoped to the environment). */
  webhookIds: string[]
}

export interface CountRows<Row> {
  rows: Row[]
  truncated: boolean
}

/** Failed (dead-lettered) webhook requests by webhook and error code, by receive time. */
export interface WebhookFailureCount {
  webhookId: string
  code: string
  count: number
}

/** Runs by function and status, by queue time. */
export interface RunOutcomeCount {
  functionId: string
  status: string
  count: number
}

export interface SqlColumn {
  name: string
  /** ClickHouse's type name, e.g. `UInt64`, `DateTime`, `Nullable(String)`. */
  type: string
}

export interface SqlResult {
  columns: SqlColumn[]
  /** Values as ClickHouse's JSON gives them: 64-bit integers as strings. */
  rows: unknown[][]
  /** Cut at the row or byte cap: more rows matched. */
  truncated: boolean
  elapsedMs: number
  rowsRead: number
  bytesRead: number
}

export interface SqlLimits {
  /** Rows one answer may hold (ClickHouse's max_result_rows, result_overflow_mode = break). */
  maxRows: number
  /** Bytes one answer may hold (max_result_bytes, break). */
  maxResultBytes: number
  /** max_execution_time: a query running longer is stopped (QUERY_TOO_COSTLY). */
  timeoutSeconds: number
  /** max_rows_to_read (current releases; 18.16 skips it under FINAL). */
  maxRowsToRead: number
}

/** Read-only SQL over the ClickHouse tables (distributed mode only). */
export interface SqlInsights {
  readonly version: string
  readonly database: string
  readonly limits: SqlLimits
  /** One read query under readonly=1 and the limits; ClickHouse's refusals as SluiceErrors. */
  query(sql: string): Promise<SqlResult>
}

export interface SchemaViolationsQuery {
  /** Receive-time range `[from, to)`, ms. */
  from: number
  to: number
  env: string
  name: string
  bucketMs: number
  /** How many of the latest violating events to return. */
  samples: number
}

export interface ViolationSample {
  id: string
  internalId: string
  receivedAt: number
  violations: string[]
}

/** Stored events of one name that carry schema violations (warn mode), per bucket. */
export interface SchemaViolations {
  /** Start of each bucket, ascending, with its count. */
  buckets: number[]
  counts: number[]
  total: number
  /** The latest violating events, newest first. */
  samples: ViolationSample[]
  /** The embedded scan stopped at its bound: the counts cover the newest part of the range. */
  truncated: boolean
}

export interface InsightsStore {
  eventCounts(query: EventCountsQuery): Promise<EventCounts>
  schemaViolations(query: SchemaViolationsQuery): Promise<SchemaViolations>
  webhookFailures(query: WebhookFailuresQuery): Promise<CountRows<WebhookFailureCount>>
  runOutcomes(query: InsightsRange): Promise<CountRows<RunOutcomeCount>>
  /** Present in distributed mode. */
  readonly sql?: SqlInsights
  close(): Promise<void>
}

/** Bucket starts covering `[from, to)`: from the bucket holding `from` up to the one holding `to - 1`. */
export function bucketStarts(from: number, to: number, bucketMs: number): number[] {
  const first = Math.floor(from / bucketMs) * bucketMs
  const out: number[] = []
  for (let b = first; b < to; b += bucketMs) out.push(b)
  return out
}

/**
 * Keeps the `top` names with the largest totals (ties by name) and sums the rest into `other`.
 * Adapters that count every name feed it their per-name series.
 */
export function topSeries(
  named: Array<CountSeries & { name: string }>,
  top: number,
  bucketCount: number,
): Pick<EventCounts, 'series' | 'other'> {
  const sorted = [...named].sort((a, b) => b.total - a.total || (a.name < b.name ? -1 : 1))
  const rest = sorted.slice(top)
  if (rest.length === 0) return { series: sorted, other: null }
  const other: CountSeries = { total: 0, counts: new Array<number>(bucketCount).fill(0) }
  for (const s of rest) {
    other.total += s.total
    for (let i = 0; i < bucketCount; i++) other.counts[i] += s.counts[i]
  }
  return { series: sorted.slice(0, top), other }
}
