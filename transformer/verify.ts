// Built-in signature verification, checked on the raw body bytes before the transform runs.
// Timestamps are checked against the request's receive time, not the current time, so a
// request replayed after a fix still verifies. A webhook rotating its key holds two secrets:
// a request signed with either passes.
import { headerOf, rawBodyBytes, type RawWebhookRequest } from '../core/raw-request.ts'
import { DEFAULT_TOLERANCE_SECONDS } from '../control/presets.ts'
import type { WebhookVerification } from '../control/types.ts'
import { presetCheck } from './presets.ts'
import type { SignedRequest, Verification } from './signing.ts'

export type { Verification } from './signing.ts'

export function verifySignature(verification: WebhookVerification, request: RawWebhookRequest): Verification {
  const signed: SignedRequest = {
    body: rawBodyBytes(request),
    header: (name) => headerOf(request.headers, name),
    query: request.query,
    contentType: headerOf(request.headers, 'content-type')?.split(';')[0].trim().toLowerCase() ?? '',
    receivedAt: request.receivedAt,
    toleranceSeconds: verification.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS,
    publicUrl: verification.publicUrl,
  }
  const check = presetCheck(verification.preset, verification.header)
  const current = check(verification.secret, signed)
  if (current.ok || verification.previousSecret === undefined) return current
  // The reason given is the current secret's: the previous one is on its way out.
  return check(verification.previousSecret, signed).ok ? { ok: true } : current
}
