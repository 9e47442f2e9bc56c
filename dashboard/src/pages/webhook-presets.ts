// The dashboard's copy of the server's preset facts (control/types.ts, control/presets.ts): it may
// import nothing of the server, and tests/dashboard/webhook-presets.test.ts keeps the two equal.

export const PRESETS = [
  'stripe',
  'github',
  'slack',
  'shopify',
  'hmac-sha256',
  'standard-webhooks',
  'twilio',
  'linear',
  'paddle',
  'square',
  'intercom',
  'zendesk',
]
/** The presets that sign the URL they called: they need `public_url`. */
export const SIGNS_URL = new Set(['twilio', 'square'])
/** The presets that sign a timestamp: only they take `tolerance_seconds`. */
export const TIMESTAMPED = new Set(['stripe', 'slack', 'standard-webhooks', 'linear', 'paddle', 'zendesk'])
export const TOLERANCE_SECONDS = { min: 5, max: 3600, default: 300 }
/** `delivery_id: "none"` turns the preset's default off. */
export const NO_DELIVERY_ID = 'none'
