// A provider's delivery ID (GitHub's X-GitHub-Delivery, Stripe's evt_…, Standard Webhooks'
// webhook-id, …) stays the same when it retries a delivery: as the dedup key of the events a
// transform gives no `id`, it makes a provider's retry a duplicate, as the Event API's `id` does.
import { headerOf, rawBodyBytes, type RawWebhookRequest } from '../core/raw-request.ts'
import { deliveryIdSource } from '../control/presets.ts'
import type { WebhookDoc } from '../control/types.ts'
import { jsonObject } from './signing.ts'

/** Room left for the `:<index>` of a request's second and later events. */
const INDEX_ROOM = 8

/** The request's delivery ID, or undefined (none configured, absent, empty or too long: the derived key then). */
export function deliveryIdOf(
  webhook: Pick<WebhookDoc, 'verification' | 'deliveryId'>,
  raw: RawWebhookRequest,
  maxIdLength: number,
): string | undefined {
  const source = deliveryIdSource(webhook)
  if (source === undefined) return undefined
  const value =
    'header' in source ? headerOf(raw.headers, source.header) : jsonObject(rawBodyBytes(raw))?.[source.bodyField]
  const id = typeof value === 'string' ? value.trim() : ''
  return id !== '' && id.length + INDEX_ROOM <= maxIdLength ? id : undefined
}

/** The dedup keys of a request's events: the delivery ID for the first, `<delivery ID>:<i>` for the others. */
export function deliveryKeys(deliveryId: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => (i === 0 ? deliveryId : `${deliveryId}:${i}`))
}
