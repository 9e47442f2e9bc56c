// What became of each webhook request: the dashboard's request list, the dead-letter list
// (status `failed`) and the central webhook page (status `unrouted`). Domain-shaped and
// small, so a ClickHouse adapter can implement it beside the RocksDB one.
import type { EventInput } from '../core/event.ts'
import type { RawWebhookRequest } from '../core/raw-request.ts'

/**
 * delivered: its events went to `incoming`; failed: dead-lettered (signature, transform,
 * invalid or denied event), replayable; unrouted: a branch-group webhook request with no or
 * an unknown `x-service-env`, kept with its transformed events, no functions run; held: its
 * webhook is paused, so it waits here untransformed until a resume releases it in order.
 */
export type RequestStatus = 'delivered' | 'failed' | 'unrouted' | 'held'
export const REQUEST_STATUSES: readonly RequestStatus[] = ['delivered', 'failed', 'unrouted', 'held']

export interface RequestError {
  code: string
  message: string
}

export interface WebhookRequestRecord {
  /** The captured request, of the attempt that produced this outcome (replays reuse it). */
  request: RawWebhookRequest
  status: RequestStatus
  processedAt: number
  /** The environment the events went to; null when failed or unrouted. */
  env: string | null
  /** Internal IDs of the published events, in order (delivered only). */
  eventIds: string[]
  /** The transformed events, kept for unrouted requests, which publish nothing. */
  events: EventInput[]
  error: RequestError | null
}

export interface RequestQuery {
  webhookId: string
  status?: RequestStatus
  limit: number
  /** The request ID of the last record of the previous page: results continue below it (above when oldestFirst). */
  cursor?: string
  /** Ascending request ID instead: how held requests are released, in the order they arrived. */
  oldestFirst?: boolean
}

export interface RequestPage {
  requests: WebhookRequestRecord[]
  nextCursor: string | null
}

/** Newest first unless asked otherwise (descending request ID: ULIDs sort by receive time). */
export interface WebhookRequestStore {
  /**
   * Upserts by (webhook, request ID). An outcome of an older attempt never replaces a newer
   * attempt's, so a redelivered first attempt cannot undo a replay's result.
   */
  record(records: WebhookRequestRecord[]): Promise<void>
  get(webhookId: string, requestId: string): Promise<WebhookRequestRecord | null>
  list(query: RequestQuery): Promise<RequestPage>
  /** How many of the webhook's requests have the status now (held: a paused webhook's count). */
  count(webhookId: string, status: RequestStatus): Promise<number>
  /** Forgets every request of a deleted webhook. */
  removeWebhook(webhookId: string): Promise<void>
  close(): Promise<void>
}
