// The pieces every signature preset is made of: the request as a check sees it, keyed hashes,
// a constant-time compare and the timestamp window. Outcomes are values.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'

export type Verification = { ok: true } | { ok: false; reason: string }

export const fail = (reason: string): Verification => ({ ok: false, reason })
export const OK: Verification = { ok: true }

/** One request as a preset checks it, with the webhook's settings that are not secret. */
export interface SignedRequest {
  body: Buffer
  header(name: string): string | undefined
  query: Record<string, string[]>
  contentType: string
  /** Timestamps are compared with this, not with now, so a replay after a fix still verifies. */
  receivedAt: number
  toleranceSeconds: number
  /** twilio, square: the URL the provider called, without the query string. */
  publicUrl?: string
}

/** A check of one secret: rotation tries each secret the webhook holds. */
export type PresetCheck = (secret: string, request: SignedRequest) => Verification

export function mac(algorithm: 'sha1' | 'sha256', key: string | Buffer, ...parts: Array<string | Buffer>): Buffer {
  const hmac = createHmac(algorithm, key)
  for (const part of parts) hmac.update(part)
  return hmac.digest()
}

/**
 * Constant-time: both sides are hashed to equal length first, so neither the position of the
 * first differing byte nor the length of the given signature shows in the timing.
 */
export function sameDigest(expected: Buffer | string, given: Buffer | string): boolean {
  const digest = (value: Buffer | string) => createHash('sha256').update(value).digest()
  return timingSafeEqual(digest(expected), digest(given))
}

/** Any of several given signatures may match (senders send one per active secret while rolling one). */
export function anySame(expected: string, given: string[]): boolean {
  // Every candidate is compared, so the time taken does not depend on which one matched.
  return given.map((candidate) => sameDigest(expected, candidate)).includes(true)
}

/** Whole seconds since the epoch, as most providers sign them. */
export function fromSeconds(text: string | undefined): number | undefined {
  return text !== undefined && /^\d{1,12}$/.test(text.trim()) ? Number(text.trim()) * 1000 : undefined
}

export function withinTolerance(signedAtMs: number | undefined, request: SignedRequest): boolean {
  return signedAtMs !== undefined && Math.abs(signedAtMs - request.receivedAt) <= request.toleranceSeconds * 1000
}

/** "5 minutes", "90 seconds": for the reason of a stale request. */
export function toleranceText(seconds: number): string {
  if (seconds % 60 !== 0) return `${seconds} seconds`
  return seconds === 60 ? '1 minute' : `${seconds / 60} minutes`
}

/** The body parsed as a JSON object, for presets that sign or identify with a body field. */
export function jsonObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'))
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}
