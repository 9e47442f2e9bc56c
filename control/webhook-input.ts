// Domain rules of webhook settings that a schema cannot state. Types, lengths and allowed
// values are checked first by the REST schema (api/webhook-schemas.ts); messages name the
// field in its REST spelling (snake_case), so a 400 says exactly what to fix.
import { Script } from 'node:vm'
import { SluiceError } from '../core/errors.ts'
import { parseCidr } from './webhook-lists.ts'
import { MAX_TOLERANCE_SECONDS, MIN_TOLERANCE_SECONDS, NO_DELIVERY_ID, PRESET_FACTS, secretProblem } from './presets.ts'
import type { VerificationPreset, WebhookVerification } from './types.ts'

export const MAX_TRANSFORM_BYTES = 64 * 1024
export const MAX_LIST_ENTRIES = 100
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/

const invalid = (message: string) => new SluiceError('REQUEST_INVALID', message)

export function checkName(value: string | undefined): string {
  const name = value?.trim() ?? ''
  if (name === '' || name.length > 128) throw invalid('name: must be a non-empty string of at most 128 characters')
  return name
}

/**
 * A transform's source. It is only parsed here (node:vm's Script compiles without running
 * anything), so a syntax error is a 400 at save time rather than a dead letter later; the
 * code itself only ever runs in the sandbox.
 */
export function checkTransform(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined || value === '') return undefined
  if (Buffer.byteLength(value) > MAX_TRANSFORM_BYTES)
    throw invalid(`transform: longer than ${MAX_TRANSFORM_BYTES} bytes`)
  try {
    new Script(value, { filename: 'transform.js' })
  } catch (err) {
    throw invalid(`transform: ${(err as Error).name}: ${(err as Error).message}`)
  }
  return value
}

export function checkCidrs(field: string, value: string[] | null | undefined): string[] {
  const entries = trimmed(value)
  entries.forEach((entry, i) => {
    const cidr = parseCidr(entry)
    if (typeof cidr === 'string') throw invalid(`${field}[${i}]: ${cidr}`)
  })
  return entries
}

export function checkPatterns(field: string, value: string[] | null | undefined): string[] {
  const entries = trimmed(value)
  entries.forEach((entry, i) => {
    if (entry.length === 0 || entry.length > 256) {
      throw invalid(`${field}[${i}]: must be an event name pattern of 1 to 256 characters ("*" matches anything)`)
    }
  })
  return entries
}

const trimmed = (value: string[] | null | undefined) => (value ?? []).map((v) => v.trim())

export function checkVerification(value: WebhookVerification | null | undefined): WebhookVerification | undefined {
  if (value === null || value === undefined) return undefined
  const { preset, secret, previousSecret, header, publicUrl, toleranceSeconds } = value
  if (header !== undefined && (preset !== 'hmac-sha256' || !HEADER_NAME.test(header))) {
    throw invalid('verification.header: only for the hmac-sha256 preset, and must be a header name')
  }
  // The messages name the field, never its value: a secret must not come back in an error.
  const wrongSecret = secretProblem(preset, secret)
  if (wrongSecret) throw badVerification(`verification.secret: ${wrongSecret}`)
  const wrongPrevious = previousSecret === undefined ? undefined : secretProblem(preset, previousSecret)
  if (wrongPrevious) throw badVerification(`verification.previous_secret: ${wrongPrevious}`)
  const facts = PRESET_FACTS[preset]
  if (facts.signsUrl && publicUrl === undefined)
    throw badVerification(`verification.public_url: required for the ${preset} preset, which signs the URL it called`)
  if (publicUrl !== undefined) checkPublicUrl(preset, publicUrl)
  if (toleranceSeconds !== undefined) {
    if (!facts.timestamped)
      throw badVerification(`verification.tolerance_seconds: the ${preset} preset signs no timestamp`)
    if (
      !Number.isInteger(toleranceSeconds) ||
      toleranceSeconds < MIN_TOLERANCE_SECONDS ||
      toleranceSeconds > MAX_TOLERANCE_SECONDS
    )
      throw badVerification(
        'verification.tolerance_seconds: must be a whole number of seconds ' +
          `from ${MIN_TOLERANCE_SECONDS} to ${MAX_TOLERANCE_SECONDS}`,
      )
  }
  return {
    preset,
    secret,
    ...(previousSecret !== undefined && { previousSecret }),
    ...(header !== undefined && { header }),
    ...(publicUrl !== undefined && { publicUrl }),
    ...(toleranceSeconds !== undefined && { toleranceSeconds }),
  }
}

const badVerification = (message: string) => new SluiceError('VERIFICATION_INVALID', message)

function checkPublicUrl(preset: VerificationPreset, value: string): void {
  if (!PRESET_FACTS[preset].signsUrl)
    throw badVerification(`verification.public_url: the ${preset} preset does not sign a URL`)
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw badVerification('verification.public_url: must be an absolute http or https URL')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw badVerification('verification.public_url: must be an absolute http or https URL')
  if (value.includes('?') || value.includes('#'))
    throw badVerification('verification.public_url: give it without a query string: the one received is appended')
}

/** A header name, `none`, or null/undefined for the preset's default. */
export function checkDeliveryId(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined
  if (value === NO_DELIVERY_ID || HEADER_NAME.test(value)) return value
  throw invalid(`delivery_id: a header name carrying the provider's delivery ID, or "${NO_DELIVERY_ID}"`)
}
