import type { StoredEvent } from '../core/event.ts'

export interface EventQuery {
  id?: string
  name?: string
  env?: string
  receivedAfter?: number
  receivedBefore?: number
  limit: number
  /** The internal ID of the last event of the previous page: results continue below it. */
  cursor?: string
  /** Include events dropped by dedup (they carry duplicateOf). */
  includeDuplicates?: boolean
}

export interface EventPage {
  events: StoredEvent[]
  nextCursor: string | null
}

/** Accepted and deduplicated events. Newest first = descending internal ID (ULIDs sort by time). */
export interface EventStore {
  /** Idempotent by internal ID: inserting the same event twice stores it once. */
  insertEvents(events: StoredEvent[]): Promise<void>
  getEvent(internalId: string): Promise<StoredEvent | null>
  queryEvents(query: EventQuery): Promise<EventPage>
  /**
   * Embedded only (SLUICE_EVENT_RETENTION_MS): deletes the events whose internal IDs were made before
   * `before` (ms), with their index entries; `sweepIds` also sweeps the dedup id index (a scan of it,
   * so about once per retention period); `signal` stops it between writes. ClickHouse's retention
   * is its own.
   */
  deleteBefore?(before: number, options?: { sweepIds?: boolean; signal?: AbortSignal }): Promise<void>
  close(): Promise<void>
}
