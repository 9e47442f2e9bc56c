import { SluiceError } from '../core/errors.ts'

export function queryString(q: Record<string, unknown>, field: string): string | undefined {
  const value = q[field]
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string') throw new SluiceError('REQUEST_INVALID', `${field}: give it once`)
  return value
}

/** Integers; times may also be ISO 8601 strings (converted to milliseconds). */
export function queryInt(q: Record<string, unknown>, field: string, range: { min?: number; max?: number } = {}): number | undefined {
  const text = queryString(q, field)
  if (text === undefined) return undefined
  const value = /^\d+$/.test(text) ? Number(text) : field.startsWith('received_') ? Date.parse(text) : NaN
  if (!Number.isSafeInteger(value) || (range.min !== undefined && value < range.min) || (range.max !== undefined && value > range.max)) {
    const bounds = range.max !== undefined ? ` from ${range.min} to ${range.max}` : ''
    throw new SluiceError('REQUEST_INVALID', `${field}: must be an integer${bounds}${field.startsWith('received_') ? ' (milliseconds) or an ISO 8601 time' : ''}`)
  }
  return value
}
