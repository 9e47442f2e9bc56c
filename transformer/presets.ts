// Each built-in preset's check of one secret, written from the provider's documented algorithm
// (docs/webhooks.md, "Built-in presets", has the table). What a preset needs and offers besides
// (a timestamp, a public URL, a delivery ID) is data in control/presets.ts.
import { createHash } from 'node:crypto'
import { standardWebhooksKey } from '../control/presets.ts'
import type { VerificationPreset } from '../control/types.ts'
import {
  anySame,
  fail,
  fromSeconds,
  jsonObject,
  mac,
  OK,
  sameDigest,
  toleranceText,
  withinTolerance,
  type PresetCheck,
  type SignedRequest,
  type Verification,
} from './signing.ts'

export const DEFAULT_HMAC_HEADER = 'X-Signature'

const stale = (preset: string, what: string, request: SignedRequest) =>
  fail(`${preset}: ${what} is missing or more than ${toleranceText(request.toleranceSeconds)} from the receive time`)

/** `k=v` pairs split on `separator`; a key may repeat (one signature per active secret). */
function pairs(text: string, separator: string): Array<[string, string]> {
  return text.split(separator).map((part) => {
    const at = part.indexOf('=')
    return at < 0 ? [part.trim(), ''] : [part.slice(0, at).trim(), part.slice(at + 1).trim()]
  })
}

/** Hex or base64 (with an optional `sha256=` prefix), as generic senders vary. */
function decodeSignature(text: string): Buffer[] {
  const value = text.trim().replace(/^sha256=/i, '')
  const candidates: Buffer[] = []
  if (/^[0-9a-f]{64}$/i.test(value)) candidates.push(Buffer.from(value, 'hex'))
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) candidates.push(Buffer.from(value, 'base64'))
  return candidates
}

function github(secret: string, r: SignedRequest): Verification {
  const given = r.header('X-Hub-Signature-256')
  if (!given) return fail('github: the X-Hub-Signature-256 header is missing')
  const expected = 'sha256=' + mac('sha256', secret, r.body).toString('hex')
  return sameDigest(expected, given.trim()) ? OK : fail('github: X-Hub-Signature-256 does not match the body')
}

function stripe(secret: string, r: SignedRequest): Verification {
  const given = r.header('Stripe-Signature')
  if (!given) return fail('stripe: the Stripe-Signature header is missing')
  const parts = pairs(given, ',')
  const t = parts.find(([k]) => k === 't')?.[1]
  if (!withinTolerance(fromSeconds(t), r)) return stale('stripe', 'the Stripe-Signature timestamp', r)
  const expected = mac('sha256', secret, `${t}.`, r.body).toString('hex')
  const v1 = parts.filter(([k]) => k === 'v1').map(([, v]) => v)
  return anySame(expected, v1) ? OK : fail('stripe: no v1 signature in Stripe-Signature matches the body')
}

function slack(secret: string, r: SignedRequest): Verification {
  const given = r.header('X-Slack-Signature')
  const ts = r.header('X-Slack-Request-Timestamp')
  if (!given) return fail('slack: the X-Slack-Signature header is missing')
  if (!withinTolerance(fromSeconds(ts), r)) return stale('slack', 'X-Slack-Request-Timestamp', r)
  const expected = 'v0=' + mac('sha256', secret, `v0:${ts}:`, r.body).toString('hex')
  return sameDigest(expected, given.trim()) ? OK : fail('slack: X-Slack-Signature does not match the body')
}

function shopify(secret: string, r: SignedRequest): Verification {
  const given = r.header('X-Shopify-Hmac-Sha256')
  if (!given) return fail('shopify: the X-Shopify-Hmac-Sha256 header is missing')
  const expected = mac('sha256', secret, r.body).toString('base64')
  return sameDigest(expected, given.trim()) ? OK : fail('shopify: X-Shopify-Hmac-Sha256 does not match the body')
}

function hmacSha256(header: string | undefined): PresetCheck {
  const name = header ?? DEFAULT_HMAC_HEADER
  return (secret, r) => {
    const given = r.header(name)
    if (!given) return fail(`hmac-sha256: the ${name} header is missing`)
    const expected = mac('sha256', secret, r.body)
    const results = decodeSignature(given).map((candidate) => sameDigest(expected, candidate))
    return results.includes(true)
      ? OK
      : fail(`hmac-sha256: ${name} does not match the body (expected the hex or base64 HMAC-SHA256 of the raw body)`)
  }
}

/** standardwebhooks.com: HMAC-SHA256 keyed by the base64 after `whsec_`, over `<id>.<timestamp>.<body>`. */
function standardWebhooks(secret: string, r: SignedRequest): Verification {
  const id = r.header('webhook-id')
  const timestamp = r.header('webhook-timestamp')
  const signatures = r.header('webhook-signature')
  if (!id || !timestamp || !signatures)
    return fail('standard-webhooks: the webhook-id, webhook-timestamp and webhook-signature headers are all required')
  if (!withinTolerance(fromSeconds(timestamp), r)) return stale('standard-webhooks', 'webhook-timestamp', r)
  const key = standardWebhooksKey(secret)
  if (!key) return fail('standard-webhooks: the secret is not whsec_ + base64')
  const expected = mac('sha256', key, `${id}.${timestamp.trim()}.`, r.body).toString('base64')
  const v1 = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice('v1,'.length))
  return anySame(expected, v1) ? OK : fail('standard-webhooks: no v1 signature in webhook-signature matches the body')
}

/** The query string as received, in its order, for the presets that sign the URL they called. */
function calledUrls(r: SignedRequest): string[] {
  const base = r.publicUrl ?? ''
  const query = new URLSearchParams(Object.entries(r.query).flatMap(([k, vs]) => vs.map((v) => [k, v]))).toString()
  const withQuery = (url: string) => (query ? `${url}?${query}` : url)
  // As twilio's own library: the URL with and without the scheme's default port, as proxies differ.
  const port = /^(https?):\/\/([^/:]+)(:\d+)?/.exec(base)
  if (!port) return [withQuery(base)]
  const defaultPort = port[1] === 'https' ? ':443' : ':80'
  const other =
    port[3] === undefined
      ? base.replace(port[0], `${port[0]}${defaultPort}`)
      : port[3] === defaultPort
        ? base.replace(port[0], `${port[1]}://${port[2]}`)
        : base
  return [...new Set([base, other])].map(withQuery)
}

/**
 * Twilio: base64 HMAC-SHA1 of the URL it called followed by each form parameter (sorted by name)
 * as name + value; a JSON body is signed through the `bodySHA256` query parameter instead.
 */
function twilio(secret: string, r: SignedRequest): Verification {
  const given = r.header('X-Twilio-Signature')
  if (!given) return fail('twilio: the X-Twilio-Signature header is missing')
  let params = ''
  if (r.contentType === 'application/x-www-form-urlencoded') {
    const form = new Map<string, string[]>()
    for (const [k, v] of new URLSearchParams(r.body.toString('utf8'))) form.set(k, [...(form.get(k) ?? []), v])
    // Code-unit order, as Twilio's "Unix-style case-sensitive" sort; a repeated name once per value.
    const names = [...form.keys()].sort()
    params = names
      .map((k) =>
        (form.get(k) ?? [])
          .sort()
          .map((v) => k + v)
          .join(''),
      )
      .join('')
  } else {
    const claimed = r.query.bodySHA256?.[0]
    const actual = createHash('sha256').update(r.body).digest('hex')
    if (claimed !== undefined && !sameDigest(actual, claimed.toLowerCase()))
      return fail('twilio: the bodySHA256 query parameter does not match the body')
  }
  const results = calledUrls(r).map((url) =>
    sameDigest(mac('sha1', secret, url, params).toString('base64'), given.trim()),
  )
  return results.includes(true)
    ? OK
    : fail('twilio: X-Twilio-Signature does not match public_url + the query string + the parameters')
}

/** Linear: hex HMAC-SHA256 of the body in Linear-Signature; `webhookTimestamp` (ms) is in the body. */
function linear(secret: string, r: SignedRequest): Verification {
  const given = r.header('Linear-Signature')
  if (!given) return fail('linear: the Linear-Signature header is missing')
  const sent = jsonObject(r.body)?.webhookTimestamp
  if (!withinTolerance(typeof sent === 'number' ? sent : undefined, r))
    return stale('linear', "the body's webhookTimestamp", r)
  const expected = mac('sha256', secret, r.body).toString('hex')
  return sameDigest(expected, given.trim()) ? OK : fail('linear: Linear-Signature does not match the body')
}

/** Paddle Billing: `Paddle-Signature: ts=<seconds>;h1=<hex HMAC-SHA256 of "<ts>:<body>">`, an h1 per secret. */
function paddle(secret: string, r: SignedRequest): Verification {
  const given = r.header('Paddle-Signature')
  if (!given) return fail('paddle: the Paddle-Signature header is missing')
  const parts = pairs(given, ';')
  const ts = parts.find(([k]) => k === 'ts')?.[1]
  if (!withinTolerance(fromSeconds(ts), r)) return stale('paddle', 'the Paddle-Signature ts', r)
  const expected = mac('sha256', secret, `${ts}:`, r.body).toString('hex')
  const h1 = parts.filter(([k]) => k === 'h1').map(([, v]) => v)
  return anySame(expected, h1) ? OK : fail('paddle: no h1 signature in Paddle-Signature matches the body')
}

/** Square: base64 HMAC-SHA256 of the notification URL followed by the body. */
function square(secret: string, r: SignedRequest): Verification {
  const given = r.header('X-Square-Hmacsha256-Signature')
  if (!given) return fail('square: the X-Square-Hmacsha256-Signature header is missing')
  const expected = calledUrls(r).map((url) => mac('sha256', secret, url, r.body).toString('base64'))
  const results = expected.map((e) => sameDigest(e, given.trim()))
  return results.includes(true)
    ? OK
    : fail('square: X-Square-Hmacsha256-Signature does not match public_url + the body')
}

/** Intercom: `X-Hub-Signature: sha1=<hex HMAC-SHA1 of the body>`, keyed by the app's client secret. */
function intercom(secret: string, r: SignedRequest): Verification {
  const given = r.header('X-Hub-Signature')
  if (!given) return fail('intercom: the X-Hub-Signature header is missing')
  const expected = 'sha1=' + mac('sha1', secret, r.body).toString('hex')
  return sameDigest(expected, given.trim()) ? OK : fail('intercom: X-Hub-Signature does not match the body')
}

/** Zendesk: base64 HMAC-SHA256 of the timestamp header (ISO 8601) followed by the body. */
function zendesk(secret: string, r: SignedRequest): Verification {
  const given = r.header('X-Zendesk-Webhook-Signature')
  const timestamp = r.header('X-Zendesk-Webhook-Signature-Timestamp')
  if (!given) return fail('zendesk: the X-Zendesk-Webhook-Signature header is missing')
  const signedAt = timestamp === undefined ? Number.NaN : Date.parse(timestamp)
  if (!withinTolerance(Number.isNaN(signedAt) ? undefined : signedAt, r))
    return stale('zendesk', 'X-Zendesk-Webhook-Signature-Timestamp', r)
  const expected = mac('sha256', secret, timestamp ?? '', r.body).toString('base64')
  return sameDigest(expected, given.trim()) ? OK : fail('zendesk: X-Zendesk-Webhook-Signature does not match the body')
}

export function presetCheck(preset: VerificationPreset, header: string | undefined): PresetCheck {
  switch (preset) {
    case 'github':
      return github
    case 'stripe':
      return stripe
    case 'slack':
      return slack
    case 'shopify':
      return shopify
    case 'hmac-sha256':
      return hmacSha256(header)
    case 'standard-webhooks':
      return standardWebhooks
    case 'twilio':
      return twilio
    case 'linear':
      return linear
    case 'paddle':
      return paddle
    case 'square':
      return square
    case 'intercom':
      return intercom
    case 'zendesk':
      return zendesk
    default: {
      const never: never = preset
      return () => fail(`unknown verification preset ${String(never)}`)
    }
  }
}
