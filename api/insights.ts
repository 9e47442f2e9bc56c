// `/v1/insights`: the dashboard's Insights page and the Events page's chart. Aggregates over a
// receive-time range, computed by the store (InsightsStore: the embedded indexes, or ClickHouse's
// GROUP BY), in both modes; and in distributed mode `POST /v1/insights/query`, one read-only SQL
// query over the ClickHouse tables under the Insights caps. Registered by the api role only,
// behind the same signing-key guard as every /v1 route (api/index.ts).
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Envs } from '../control/envs.ts'
import type { WebhookDoc } from '../control/types.ts'
import { SluiceError } from '../core/errors.ts'
import type { InsightsRange, InsightsStore } from '../store/insights-types.ts'
import {
  EventCounts,
  EventCountsQuery,
  InsightsInfo,
  RangeQuery,
  RunOutcomes,
  SqlBody,
  SqlResult,
  WebhookFailures,
} from './insights-schemas.ts'
import { queryTime } from './query.ts'
import { errors, One } from './schemas.ts'
import { BRANCH_GROUP } from '../core/env-names.ts'

const HOUR = 60 * 60_000
/** The longest range one aggregate covers: a month of buckets. */
export const MAX_RANGE_MS = 31 * 24 * HOUR
/** Bucket widths, narrowest first: the narrowest that keeps a range within MAX_BUCKETS is used. */
const BUCKETS_MS = [60_000, 5 * 60_000, 15 * 60_000, HOUR, 6 * HOUR, 24 * HOUR]
const MAX_BUCKETS = 360

export interface InsightsDeps {
  insights: InsightsStore
  envs: Pick<Envs, 'get'>
  webhooks: { list(): WebhookDoc[] }
}

const tags = ['Insights']

/** `[from, to)` from the query: `to` defaults to now, `from` to an hour before it. */
function rangeOf(q: Static<typeof RangeQuery>, now = Date.now()): InsightsRange {
  const to = queryTime('to', q.to) ?? now
  const from = queryTime('from', q.from) ?? to - HOUR
  if (from >= to) throw new SluiceError('REQUEST_INVALID', 'query.from: must be before query.to')
  if (to - from > MAX_RANGE_MS)
    throw new SluiceError(
      'REQUEST_INVALID',
      `query.from: the range may span at most ${MAX_RANGE_MS / (24 * HOUR)} days`,
    )
  return { from, to, ...(q.env && { env: q.env }) }
}

export const bucketFor = (range: InsightsRange) =>
  BUCKETS_MS.find((b) => Math.ceil((range.to - range.from) / b) <= MAX_BUCKETS) ?? BUCKETS_MS[BUCKETS_MS.length - 1]

const presentRange = (r: InsightsRange, truncated: boolean) => ({
  from: r.from,
  to: r.to,
  env: r.env ?? null,
  truncated,
})

export function insightsRoutes(deps: InsightsDeps) {
  /** The webhooks whose requests belong to `env`: its own, and the branch group's for a branch environment. */
  const webhooksOf = (env: string | undefined) => {
    const branch = env !== undefined && deps.envs.get(env)?.kind === 'branch'
    return deps.webhooks.list().filter((w) => env === undefined || w.env === env || (branch && w.env === BRANCH_GROUP))
  }

  return async (app: FastifyInstance) => {
    app.get(
      '/v1/insights',
      {
        schema: {
          permission: 'insights:read',
          tags,
          summary: 'What Insights this server offers: SQL over ClickHouse (distributed) and its caps',
          response: { 200: One(InsightsInfo), ...errors(401) },
        },
      },
      async () => {
        const sql = deps.insights.sql
        return {
          data: {
            sql: sql
              ? {
                  clickhouse_version: sql.version,
                  database: sql.database,
                  max_rows: sql.limits.maxRows,
                  max_result_bytes: sql.limits.maxResultBytes,
                  timeout_seconds: sql.limits.timeoutSeconds,
                }
              : null,
            max_range_ms: MAX_RANGE_MS,
          },
        }
      },
    )

    app.get<{ Querystring: Static<typeof EventCountsQuery> }>(
      '/v1/insights/events',
      {
        schema: {
          permission: 'insights:read',
          tags,
          summary: 'Events per minute (or wider bucket) by name, the top names and the rest summed',
          querystring: EventCountsQuery,
          response: { 200: One(EventCounts), ...errors(400, 401, 422) },
        },
      },
      async (request) => {
        const q = request.query
        const range = rangeOf(q)
        const bucketMs = bucketFor(range)
        const counts = await deps.insights.eventCounts({
          ...range,
          bucketMs,
          top: q.top ?? 5,
          ...(q.name && { name: q.name }),
        })
        return { data: { ...presentRange(range, counts.truncated), bucket_ms: bucketMs, ...counts } }
      },
    )

    app.get<{ Querystring: Static<typeof RangeQuery> }>(
      '/v1/insights/webhook-failures',
      {
        schema: {
          permission: 'insights:read',
          tags,
          summary: 'Failed (dead-lettered) webhook requests by webhook and error code',
          querystring: RangeQuery,
          response: { 200: One(WebhookFailures), ...errors(400, 401, 422) },
        },
      },
      async (request) => {
        const range = rangeOf(request.query)
        const webhooks = new Map(webhooksOf(range.env).map((w) => [w.id, w.name]))
        const counted = await deps.insights.webhookFailures({ ...range, webhookIds: [...webhooks.keys()] })
        const rows = counted.rows.map((r) => ({
          webhook_id: r.webhookId,
          webhook_name: webhooks.get(r.webhookId) ?? r.webhookId,
          code: r.code,
          count: r.count,
        }))
        return { data: { ...presentRange(range, counted.truncated), rows } }
      },
    )

    app.get<{ Querystring: Static<typeof RangeQuery> }>(
      '/v1/insights/run-outcomes',
      {
        schema: {
          permission: 'insights:read',
          tags,
          summary: 'Function runs by function and status, by queue time',
          querystring: RangeQuery,
          response: { 200: One(RunOutcomes), ...errors(400, 401, 422) },
        },
      },
      async (request) => {
        const range = rangeOf(request.query)
        const counted = await deps.insights.runOutcomes(range)
        const rows = counted.rows.map((r) => ({ function_id: r.functionId, status: r.status, count: r.count }))
        return { data: { ...presentRange(range, counted.truncated), rows } }
      },
    )

    app.post<{ Body: Static<typeof SqlBody> }>(
      '/v1/insights/query',
      {
        schema: {
          permission: 'insights:read',
          tags,
          summary: 'One read-only SQL query over the ClickHouse tables (distributed mode)',
          description:
            'Runs under readonly=1 (no writes, settings or table functions), max_execution_time, ' +
            'max_rows_to_read, and the row and byte caps of docs/configuration.md. Tables as in docs/clickhouse.md.',
          body: SqlBody,
          response: { 200: One(SqlResult), ...errors(400, 401, 404, 422) },
        },
      },
      async (request) => {
        const sql = deps.insights.sql
        if (!sql)
          throw new SluiceError(
            'SQL_UNAVAILABLE',
            'Insights SQL runs on ClickHouse, which this server does not use (embedded mode): use the aggregates of /v1/insights/events, /webhook-failures and /run-outcomes',
          )
        const r = await sql.query(request.body.sql)
        return {
          data: {
            columns: r.columns,
            rows: r.rows,
            truncated: r.truncated,
            elapsed_ms: r.elapsedMs,
            rows_read: r.rowsRead,
            bytes_read: r.bytesRead,
          },
        }
      },
    )
  }
}
