// Validation of webhook settings as they arrive from REST or the CLI. Messages name the
// field in its REST spelling (snake_case), so a 400 says exactly what to fix.
import { Script } from 'node:vm'
import { SluiceError } from '../core/errors.ts'
import { parseCidr } from './webhook-lists.ts'
import type { VerificationPreset, WebhookVerification } from './types.ts'

export const MAX_TRANSFORM_BYTES = 64 * 1024
const MAX_LIST_ENTRIES = 100
const PRESETS: VerificationPreset[] = ['stripe', 'github', 'slack', 'shopify', 'hmac-sha256']
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/

const invalid = (message: string) => new SluiceError('REQUEST_INVALID', message)

export function checkName(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 128) throw invalid('name: must be a non-empty string of at most 128 characters')
  return value.trim()
}

/**
 * A transform's source. It is only parsed here (node:vm's Script compiles without running
 * anything), so a syntax error is a 400 at save time rather than a dead letter later; the
 * code itself only ever runs in the sandbox.
 */
export function checkTransform(value: unknown): string | undefined {
  if (value === null || value === undefined || value === '') return undefined
  if (typeof value !== 'string') throw invalid('transform: must be the source of function transform(evt, headers, queryParams, raw)')
  if (Buffer.byteLength(value) > MAX_TRANSFORM_BYTES) throw invalid(`transform: longer than ${MAX_TRANSFORM_BYTES} bytes`)
  try {
    new Script(value, { filename: 'transform.js' })
  } catch (err) {
    throw invalid(`transform: ${(err as Error).name}: ${(err as Error).message}`)
  }
  return value
}

export function checkCidrs(field: string, value: unknown): string[] {
  const entries = checkStrings(field, value)
  entries.forEach((entry, i) => {
    const cidr = parseCidr(entry)
    if (typeof cidr === 'string') throw invalid(`${field}[${i}]: ${cidr}`)
  })
  return entries
}

export function checkPatterns(field: string, value: unknown): string[] {
  const entries = checkStrings(field, value)
  entries.forEach((entry, i) => {
    if (entry.length === 0 || entry.length > 256) throw invalid(`${field}[${i}]: must be an event name pattern of 1 to 256 characters ("*" matches anything)`)
  })
  return entries
}

function checkStrings(field: string, value: unknown): string[] {
  if (value === null || value === undefined) return []
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw invalid(`${field}: must be an array of strings`)
  if (value.length > MAX_LIST_ENTRIES) throw invalid(`${field}: at most ${MAX_LIST_ENTRIES} entries`)
  return (value as string[]).map((v) => v.trim())
}

export function checkVerification(value: unknown): WebhookVerification | undefined {
  if (value === null || value === undefined) return undefined
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(`verification: must be {preset, secret, header?} or null`)
  const { preset, secret, header, ...rest } = value as Record<string, unknown>
  const unknown = Object.keys(rest)[0]
  if (unknown !== undefined) throw invalid(`verification.${unknown}: unknown field (allowed: preset, secret, header)`)
  if (typeof preset !== 'string' || !PRESETS.includes(preset as VerificationPreset)) throw invalid(`verification.preset: must be one of ${PRESETS.join(', ')}`)
  if (typeof secret !== 'string' || secret.length < 8 || secret.length > 512) throw invalid('verification.secret: must be a string of 8 to 512 characters')
  if (header !== undefined && (preset !== 'hmac-sha256' || typeof header !== 'string' || !HEADER_NAME.test(header))) {
    throw invalid('verification.header: only for the hmac-sha256 preset, and must be a header name')
  }
  return { preset: preset as VerificationPreset, secret, ...(header !== undefined && { header: header as string }) }
}

export function checkBoolean(field: string, value: unknown): boolean | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'boolean') throw invalid(`${field}: must be true or false`)
  return value
}
