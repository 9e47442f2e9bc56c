// Erasure (docs/privacy.md): the events of one environment whose `data` holds a value at a path,
// the runs they triggered (with their step outputs, which runs carry) and the raw webhook requests
// they came from, found a page at a time and deleted. api/erasure-worker.ts drives it.
import type { StoredEvent } from '../core/event.ts'

export interface ErasureTarget {
  env: string
  /** Field names under `data`: `data.user.id` is ['user', 'id']. */
  path: string[]
  value: string | number | boolean
}

export interface ErasureBatch {
  /** Internal IDs of the matching events (duplicates too). */
  events: string[]
  runs: string[]
  requests: Array<{ webhookId: string; requestId: string }>
}

export interface ErasurePage {
  batch: ErasureBatch
  /** Where the next page starts (an internal ID: the scan runs newest first); null after the last. */
  next: string | null
}

export interface ErasureStore {
  /**
   * Matching events among the next `limit` events of the environment below `cursor` (all, when
   * absent), with the runs they triggered and the webhook requests they came from.
   */
  find(target: ErasureTarget, limit: number, cursor: string | null): Promise<ErasurePage>
  /** Deletes what `batch` names; idempotent. Resolves once reads no longer see any of it. */
  erase(batch: ErasureBatch): Promise<void>
}

/** Whether `event`'s data holds `value` at `path`. */
export function matchesTarget(event: Pick<StoredEvent, 'data'>, target: ErasureTarget): boolean {
  let at: unknown = event.data
  for (const field of target.path) {
    if (at === null || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, field)) return false
    at = (at as Record<string, unknown>)[field]
  }
  return at === target.value
}

/** The webhook request an event came from, if a webhook's. */
export function requestOf(event: Pick<StoredEvent, 'source'>): { webhookId: string; requestId: string } | undefined {
  const { source } = event
  return source.kind === 'webhook' ? { webhookId: source.webhookId, requestId: source.requestId } : undefined
}
