// Webhooks and their requests → the REST API's snake_case JSON. A verification secret is
// write-only: it is never shown back.
import { DEFAULT_TOLERANCE_SECONDS, deliveryIdSource, NO_DELIVERY_ID, PRESET_FACTS } from '../control/presets.ts'
import type { WebhookDoc } from '../control/types.ts'
import type { WebhookRequestRecord } from '../store/requests-types.ts'
import type { PauseView } from '../transformer/pause.ts'

const iso = (ms: number) => new Date(ms).toISOString()

const RUNNING: PauseView = { paused: false, pausedAt: null, held: 0 }

/** `pause`: whether it is paused and how many requests wait for a resume (transformer/pause.ts). */
export function presentWebhook(w: WebhookDoc, baseUrl: string, pause = RUNNING) {
  return {
    id: w.id,
    name: w.name,
    url: `${baseUrl}/e/${w.id}`,
    env: w.env,
    transform: w.transform ?? null,
    transform_version: w.transformVersion,
    allow_ips: w.allowIps,
    deny_ips: w.denyIps,
    allow_events: w.allowEvents,
    deny_events: w.denyEvents,
    verification: w.verification ? presentVerification(w.verification) : null,
    delivery_id: presentDeliveryId(w),
    disabled: w.disabled,
    paused: pause.paused,
    paused_at: pause.pausedAt === null ? null : iso(pause.pausedAt),
    held: pause.held,
    created_at: iso(w.createdAt),
    updated_at: iso(w.updatedAt),
  }
}

export function presentRequest(r: WebhookRequestRecord) {
  const q = r.request
  return {
    request_id: q.requestId,
    webhook_id: q.webhookId,
    status: r.status,
    attempt: q.attempt,
    received_at: q.receivedAt,
    processed_at: r.processedAt,
    env: r.env,
    error: r.error,
    event_ids: r.eventIds,
    events: r.events,
    request: { ip: q.ip, headers: q.headers, query: q.query, body: q.body, body_encoding: q.bodyEncoding },
  }
}

/** Everything but the secrets: whether a previous one is still accepted is all that shows of it. */
function presentVerification(v: NonNullable<WebhookDoc['verification']>) {
  const timestamped = PRESET_FACTS[v.preset].timestamped
  return {
    preset: v.preset,
    header: v.header ?? null,
    public_url: v.publicUrl ?? null,
    tolerance_seconds: timestamped ? (v.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS) : null,
    rotating: v.previousSecret !== undefined,
  }
}

function presentDeliveryId(w: WebhookDoc): string {
  const source = deliveryIdSource(w)
  if (source === undefined) return NO_DELIVERY_ID
  return 'header' in source ? `header:${source.header}` : `body:${source.bodyField}`
}
