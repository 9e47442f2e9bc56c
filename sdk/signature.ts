// Signatures of the Inngest SDK protocol (inngest/inngest docs/SDK_SPEC.md 4.1). A signing key
// `signkey-<env>-<hex>` signs with what follows its prefix: `X-Inngest-Signature: t=<s>&s=<hex>`,
// an HMAC-SHA256 of the body then the timestamp. An SDK proves it holds the key by sending
// `Authorization: Bearer signkey-<env>-<sha256 of the hex-decoded key>`.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'

const PREFIX = /^signkey-\w+-/
/** How far a signature's timestamp may be from now, as the SDKs allow (5 minutes). */
const MAX_SKEW_S = 300

const withoutPrefix = (key: string) => key.replace(PREFIX, '')

export function signature(body: string, key: string, nowMs: number): string {
  const t = Math.round(nowMs / 1000).toString()
  return `t=${t}&s=${hmac(body, key, t)}`
}

function hmac(body: string, key: string, t: string): string {
  return createHmac('sha256', withoutPrefix(key)).update(body).update(t).digest('hex')
}

/** Whether `header` signs `body` with `key`, recently. Go's SDK signs its JSON without the newline it writes. */
export function verifySignature(header: string | undefined, body: string, key: string, nowMs: number): boolean {
  if (!header) return false
  const params = new URLSearchParams(header)
  const t = params.get('t') ?? ''
  const s = params.get('s') ?? ''
  if (!/^\d+$/.test(t) || !/^[0-9a-f]{64}$/.test(s)) return false
  if (Math.abs(nowMs / 1000 - Number(t)) > MAX_SKEW_S) return false
  const given = Buffer.from(s, 'hex')
  const bodies = body.endsWith('\n') ? [body, body.slice(0, -1)] : [body]
  return bodies.some((b) => timingSafeEqual(Buffer.from(hmac(b, key, t), 'hex'), given))
}

/** The bearer token an SDK sends for `key`: its prefix, then the SHA-256 of the hex-decoded rest. */
export function hashedSigningKey(key: string): string {
  const prefix = PREFIX.exec(key)?.[0] ?? ''
  return (
    prefix +
    createHash('sha256')
      .update(Buffer.from(withoutPrefix(key), 'hex'))
      .digest('hex')
  )
}

/** Whether an SDK's `Authorization` header holds `key` (hashed, as SDKs send it; or as is). */
export function bearerHoldsKey(authorization: string | undefined, key: string): boolean {
  const token = /^bearer +(.*)$/is.exec(authorization ?? '')?.[1]?.trim() ?? ''
  const digest = (text: string) => createHash('sha256').update(text).digest()
  const given = digest(token)
  // JS and Go send the prefix, Python only the hash after it.
  const hashed = hashedSigningKey(key)
  return [hashed, hashed.replace(PREFIX, ''), key].some((k) => timingSafeEqual(digest(k), given))
}
