// WebhookRequestStore on ClickHouse. `webhook_requests` is a ReplacingMergeTree(attempt)
// keyed by (webhook_id, request_id): FINAL reads the newest attempt's outcome, so a late
// redelivery of attempt 1 can never undo a replay's. A deleted webhook gets a tombstone in
// `removed_webhooks` (reads skip it at once) and an ALTER … DELETE that erases its rows.
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client'
import type { Logger } from 'pino'
import type { EventInput } from '../core/event.ts'
import { fingerprint } from '../core/fingerprint.ts'
import type { RawWebhookRequest } from '../core/raw-request.ts'
import type {
  RequestPage,
  RequestQuery,
  RequestStatus,
  WebhookRequestRecord,
  WebhookRequestStore,
} from './requests-types.ts'
import type { TableNames } from './clickhouse-schema.ts'
import type { FinalFilters, Select } from './clickhouse-read.ts'
import { sqlString, whereClause, type SqlValues } from './clickhouse-sql.ts'

export interface RequestRow {
  webhook_id: string
  request_id: string
  attempt: number
  received_at: number | string
  ip: string
  headers: string
  query: string
  body: string
  body_encoding: string
  status: string
  processed_at: number | string
  env: string | null
  event_ids: string[]
  events: string
  error_code: string | null
  error_message: string | null
}

const COLUMNS =
  'webhook_id, request_id, attempt, received_at, ip, headers, query, body, body_encoding, status, processed_at, env, event_ids, events, error_code, error_message'

export function requestToRow(record: WebhookRequestRecord): RequestRow {
  const { request, status, processedAt, env, eventIds, events, error, ...unmappedRecord } = record
  // resumeMarker: markers are never recorded.
  const {
    requestId,
    webhookId,
    attempt,
    receivedAt,
    ip,
    headers,
    query,
    body,
    bodyEncoding,
    resumeMarker: _,
    ...unmappedRequest
  } = request
  // Compile-time guard: a field added to either type fails here instead of being dropped silently.
  const nothingLeft: Record<string, never> = { ...unmappedRecord, ...unmappedRequest }
  void nothingLeft
  return {
    webhook_id: webhookId,
    request_id: requestId,
    attempt,
    received_at: receivedAt,
    ip,
    headers: JSON.stringify(headers),
    query: JSON.stringify(query),
    body,
    body_encoding: bodyEncoding,
    status,
    processed_at: processedAt,
    env,
    event_ids: eventIds,
    events: JSON.stringify(events),
    error_code: error?.code ?? null,
    error_message: error?.message ?? null,
  }
}

function rowToRecord(row: RequestRow): WebhookRequestRecord {
  const request: RawWebhookRequest = {
    requestId: row.request_id,
    webhookId: row.webhook_id,
    attempt: row.attempt,
    receivedAt: Number(row.received_at),
    ip: row.ip,
    headers: JSON.parse(row.headers) as Record<string, string>,
    query: JSON.parse(row.query) as Record<string, string[]>,
    body: row.body,
    bodyEncoding: row.body_encoding as RawWebhookRequest['bodyEncoding'],
  }
  return {
    request,
    status: row.status as RequestStatus,
    processedAt: Number(row.processed_at),
    env: row.env,
    eventIds: row.event_ids,
    events: JSON.parse(row.events) as EventInput[],
    error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? '' },
  }
}

export interface ClickHouseRequestStoreDeps {
  /** For the tombstone and the ALTER … DELETE of removeWebhook. */
  client: ClickHouseClient
  select: Select
  tables: TableNames
  /** What every insert sends (on a cluster: synchronous, with the quorum). */
  insertSettings: ClickHouseSettings
  log: Logger
  /** Writes rows (batched, newest attempt per request kept: see clickhouse.ts). */
  write(rows: RequestRow[]): Promise<void>
}

export function createClickHouseRequestStore(deps: ClickHouseRequestStoreDeps): WebhookRequestStore {
  const { client, tables } = deps

  /**
   * `fixed` tests only columns that no attempt changes (safe under FINAL, see runs); the
   * status of the newest attempt is filtered outside, once rows have collapsed.
   */
  async function select(webhookId: string, filters: (v: SqlValues) => FinalFilters): Promise<WebhookRequestRecord[]> {
    const rows = await deps.select<RequestRow>((v) => {
      const { fixed, current, tail } = filters(v)
      const webhook = v.string(webhookId)
      const inner = whereClause([
        `webhook_id = ${webhook}`,
        `webhook_id ${tables.global}NOT IN (SELECT webhook_id FROM ${tables.removedWebhooks} ` +
          `WHERE webhook_id = ${webhook})`,
        ...fixed,
      ])
      const newest = `SELECT ${COLUMNS} FROM ${tables.requests} FINAL ${inner}`
      return `SELECT ${COLUMNS} FROM (${newest}) ${whereClause(current)} ${tail}`
    })
    return rows.map(rowToRecord)
  }

  return {
    async record(records) {
      if (records.length === 0) return
      await deps.write(records.map(requestToRow))
    },

    async get(webhookId, requestId) {
      const [record] = await select(webhookId, (v) => ({
        fixed: [`request_id = ${v.string(requestId)}`],
        current: [],
        tail: 'LIMIT 1',
      }))
      return record ?? null
    },

    async list(q: RequestQuery): Promise<RequestPage> {
      if (q.limit <= 0) return { requests: [], nextCursor: null }
      const requests = await select(q.webhookId, (v) => ({
        fixed: q.cursor !== undefined ? [`request_id ${q.oldestFirst ? '>' : '<'} ${v.string(q.cursor)}`] : [],
        current: q.status !== undefined ? [`status = ${v.string(q.status)}`] : [],
        tail: `ORDER BY request_id ${q.oldestFirst ? 'ASC' : 'DESC'} LIMIT ${v.int(q.limit + 1)}`,
      }))
      if (requests.length <= q.limit) return { requests, nextCursor: null }
      const page = requests.slice(0, q.limit)
      return { requests: page, nextCursor: page[page.length - 1].request.requestId }
    },

    async count(webhookId, status) {
      const rows = await deps.select<{ n: number | string }>((v) => {
        const webhook = v.string(webhookId)
        const removed = `SELECT webhook_id FROM ${tables.removedWebhooks} WHERE webhook_id = ${webhook}`
        const inner = whereClause([`webhook_id = ${webhook}`, `webhook_id ${tables.global}NOT IN (${removed})`])
        const newest = `SELECT status FROM ${tables.requests} FINAL ${inner}`
        return `SELECT count() AS n FROM (${newest}) WHERE status = ${v.string(status)}`
      })
      return Number(rows[0]?.n ?? 0)
    },

    async removeWebhook(webhookId) {
      await client.insert({
        table: tables.removedWebhooks,
        values: [{ webhook_id: webhookId, removed_at: Date.now() }],
        format: 'JSONEachRow',
        clickhouse_settings: deps.insertSettings,
      })
      // A mutation rewrites the parts holding the webhook's rows, in the background; the
      // tombstone above already hides them, so nothing waits for it.
      await client.command({
        query: `ALTER TABLE ${tables.requestsMutation} DELETE WHERE webhook_id = ${sqlString(webhookId)}`,
      })
      deps.log.info({ webhook: fingerprint(webhookId) }, 'webhook requests scheduled for deletion')
    },

    close: async () => {},
  }
}
