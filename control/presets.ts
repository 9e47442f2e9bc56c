// What each signature preset needs and offers, as data: checked at save time (webhook-input.ts)
// and read by the transformer (verify.ts, delivery-id.ts), so the two cannot disagree.
import type { VerificationPreset, WebhookDoc } from './types.ts'

export interface PresetFacts {
  /** The provider signs a timestamp: requests outside the webhook's tolerance are refused. */
  timestamped: boolean
  /** The provider signs the URL it called: the webhook needs `verification.public_url`. */
  signsUrl: boolean
  /** Where the provider's delivery ID is, the same on its retries: a header, or a top-level body field. */
  deliveryId?: DeliveryIdSource
}

export const PRESET_FACTS: Record<VerificationPreset, PresetFacts> = {
  stripe: { timestamped: true, signsUrl: false, deliveryId: { bodyField: 'id' } },
  github: { timestamped: false, signsUrl: false, deliveryId: { header: 'X-GitHub-Delivery' } },
  slack: { timestamped: true, signsUrl: false, deliveryId: { bodyField: 'event_id' } },
  shopify: { timestamped: false, signsUrl: false, deliveryId: { header: 'X-Shopify-Webhook-Id' } },
  'hmac-sha256': { timestamped: false, signsUrl: false },
  'standard-webhooks': { timestamped: true, signsUrl: false, deliveryId: { header: 'webhook-id' } },
  twilio: { timestamped: false, signsUrl: true, deliveryId: { header: 'I-Twilio-Idempotency-Token' } },
  linear: { timestamped: true, signsUrl: false, deliveryId: { header: 'Linear-Delivery' } },
  paddle: { timestamped: true, signsUrl: false, deliveryId: { bodyField: 'event_id' } },
  square: { timestamped: false, signsUrl: true, deliveryId: { bodyField: 'event_id' } },
  intercom: { timestamped: false, signsUrl: false, deliveryId: { bodyField: 'id' } },
  zendesk: { timestamped: true, signsUrl: false, deliveryId: { header: 'X-Zendesk-Webhook-Invocation-Id' } },
}

/** Stripe's and Slack's own default. */
export const DEFAULT_TOLERANCE_SECONDS = 300
export const MIN_TOLERANCE_SECONDS = 5
export const MAX_TOLERANCE_SECONDS = 3600

/** `delivery_id: "none"` turns the preset's default off. */
export const NO_DELIVERY_ID = 'none'

export type DeliveryIdSource = { header: string } | { bodyField: string }

/** Where a webhook's delivery ID is read: its own `deliveryId` (a header, or none), else its preset's default. */
export function deliveryIdSource(
  webhook: Pick<WebhookDoc, 'verification' | 'deliveryId'>,
): DeliveryIdSource | undefined {
  if (webhook.deliveryId === NO_DELIVERY_ID) return undefined
  if (webhook.deliveryId !== undefined) return { header: webhook.deliveryId }
  return webhook.verification && PRESET_FACTS[webhook.verification.preset].deliveryId
}

/** Standard Webhooks: `whsec_` (optional, as the reference library) + base64 of 24 to 64 random bytes. */
export function standardWebhooksKey(secret: string): Buffer | undefined {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(encoded)) return undefined
  const key = Buffer.from(encoded, 'base64')
  return key.length >= 24 && key.length <= 64 ? key : undefined
}

/** Why a secret cannot be one of this preset's, or undefined when its form is right. */
export function secretProblem(preset: VerificationPreset, secret: string): string | undefined {
  if (preset === 'standard-webhooks' && !standardWebhooksKey(secret))
    return 'must be whsec_ followed by the base64 of 24 to 64 bytes, as the sender shows it'
  return undefined
}
