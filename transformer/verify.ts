// Built-in signature verification presets, checked on the raw body bytes before the
// transform runs. Timestamps are checked against the request's receive time, not the
// current time, so a request replayed after a fix still verifies.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { headerOf, rawBodyBytes, type RawWebhookRequest } from '../core/raw-request.ts'
import type { WebhookVerification } from '../control/types.ts'

export type Verification = { ok: true } | { ok: false; reason: string }

/** How far a signed timestamp may be from the receive time (Stripe's and Slack's own default). */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60 * 1000
export const DEFAULT_HMAC_HEADER = 'X-Signature'

const hmac = (secret: string, ...parts: Array<string | Buffer>) => {
  const mac = createHmac('sha256', secret)
  for (const part of parts) mac.update(part)
  return mac.digest()
}

/**
 * Constant-time: both sides are hashed to equal length first, so neither the position of the
 * first differing byte nor the length of the given signature shows in the timing.
 */
function sameDigest(expected: Buffer, given: Buffer): boolean {
  return timingSafeEqual(createHash('sha256').update(expected).digest(), createHash('sha256').update(given).digest())
}

const fail = (reason: string): Verification => ({ ok: false, reason })
const OK: Verification = { ok: true }

function fresh(seconds: string | undefined, receivedAt: number): boolean {
  if (seconds === undefined || !/^\d{1,12}$/.test(seconds)) return false
  return Math.abs(Number(seconds) * 1000 - receivedAt) <= TIMESTAMP_TOLERANCE_MS
}

/** Hex or base64 (with an optional `sha256=` prefix), as generic senders vary. */
function decodeSignature(text: string): Buffer[] {
  const value = text.trim().replace(/^sha256=/i, '')
  const candidates: Buffer[] = []
  if (/^[0-9a-f]{64}$/i.test(value)) candidates.push(Buffer.from(value, 'hex'))
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) candidates.push(Buffer.from(value, 'base64'))
  return candidates
}

export function verifySignature(verification: WebhookVerification, request: RawWebhookRequest): Verification {
  const body = rawBodyBytes(request)
  const { secret } = verification
  const header = (name: string) => headerOf(request.headers, name)
  switch (verification.preset) {
    case 'github': {
      const given = header('X-Hub-Signature-256')
      if (!given) return fail('github: the X-Hub-Signature-256 header is missing')
      const expected = 'sha256=' + hmac(secret, body).toString('hex')
      return sameDigest(Buffer.from(expected), Buffer.from(given.trim()))
        ? OK
        : fail('github: X-Hub-Signature-256 does not match the body')
    }
    case 'stripe': {
      const given = header('Stripe-Signature')
      if (!given) return fail('stripe: the Stripe-Signature header is missing')
      const parts = given.split(',').map((p) => p.trim().split('='))
      const t = parts.find(([k]) => k === 't')?.[1]
      if (!fresh(t, request.receivedAt))
        return fail('stripe: the Stripe-Signature timestamp is missing or more than 5 minutes from the receive time')
      const expected = hmac(secret, `${t}.`, body).toString('hex')
      // Stripe sends one v1 per active secret while a secret is being rolled.
      const matches = parts
        .filter(([k]) => k === 'v1')
        .some(([, v]) => sameDigest(Buffer.from(expected), Buffer.from(v ?? '')))
      return matches ? OK : fail('stripe: no v1 signature in Stripe-Signature matches the body')
    }
    case 'slack': {
      const given = header('X-Slack-Signature')
      const ts = header('X-Slack-Request-Timestamp')
      if (!given) return fail('slack: the X-Slack-Signature header is missing')
      if (!fresh(ts, request.receivedAt))
        return fail('slack: X-Slack-Request-Timestamp is missing or more than 5 minutes from the receive time')
      const expected = 'v0=' + hmac(secret, `v0:${ts}:`, body).toString('hex')
      return sameDigest(Buffer.from(expected), Buffer.from(given.trim()))
        ? OK
        : fail('slack: X-Slack-Signature does not match the body')
    }
    case 'shopify': {
      const given = header('X-Shopify-Hmac-Sha256')
      if (!given) return fail('shopify: the X-Shopify-Hmac-Sha256 header is missing')
      const expected = hmac(secret, body).toString('base64')
      return sameDigest(Buffer.from(expected), Buffer.from(given.trim()))
        ? OK
        : fail('shopify: X-Shopify-Hmac-Sha256 does not match the body')
    }
    case 'hmac-sha256': {
      const name = verification.header ?? DEFAULT_HMAC_HEADER
      const given = header(name)
      if (!given) return fail(`hmac-sha256: the ${name} header is missing`)
      const expected = hmac(secret, body)
      // Every candidate decoding is compared, so the time taken does not depend on which one matched.
      const results = decodeSignature(given).map((candidate) => sameDigest(expected, candidate))
      return results.includes(true)
        ? OK
        : fail(`hmac-sha256: ${name} does not match the body (expected the hex or base64 HMAC-SHA256 of the raw body)`)
    }
    default: {
      const never: never = verification.preset
      return fail(`unknown verification preset ${String(never)}`)
    }
  }
}
