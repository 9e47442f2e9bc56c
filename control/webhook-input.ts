// Domain rules of webhook settings that a schema cannot state. Types, lengths and allowed
// values are checked first by the REST schema (api/webhook-schemas.ts); messages name the
// field in its REST spelling (snake_case), so a 400 says exactly what to fix.
import { Script } from 'node:vm'
import { SluiceError } from '../core/errors.ts'
import { parseCidr } from './webhook-lists.ts'
import type { WebhookVerification } from './types.ts'

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
  const { preset, secret, header } = value
  if (header !== undefined && (preset !== 'hmac-sha256' || !HEADER_NAME.test(header))) {
    throw invalid('verification.header: only for the hmac-sha256 preset, and must be a header name')
  }
  return { preset, secret, ...(header !== undefined && { header }) }
}
