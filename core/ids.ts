import { randomBytes, randomFillSync } from 'node:crypto'
import { decodeTime } from 'ulid'
import { SluiceError } from './errors.ts'

const CROCKFORD_CODES = Buffer.from('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 'latin1')
const ENTROPY_BYTES = 10

/**
 * ULIDs, monotonic within this process: a new millisecond starts from fresh crypto randomness,
 * an ID in the same millisecond is the previous one plus 1 (as the ulid package's monotonic
 * factory). Made here, not with that factory, because a 500-event request needs 500 IDs at once:
 * the factory re-encodes every ID as strings and draws one crypto byte per character, ~1 µs per
 * ID here; this encodes the time once, increments 16 base-32 digits in place and makes each ID one
 * string.
 */
const random = Buffer.alloc(4096)
let randomAt = random.length
let lastTime = -1
const lastDigits = new Uint8Array(16)

export function newUlids(count: number, nowMs = Date.now()): string[] {
  if (nowMs > lastTime) {
    lastTime = nowMs
    if (randomAt + 16 > random.length) {
      randomFillSync(random)
      randomAt = 0
    }
    for (let i = 0; i < 16; i++) lastDigits[i] = random[randomAt++] & 31
  } else if (!increment(lastDigits)) {
    throw new Error('ULID overflow: 2^80 IDs in one millisecond')
  }
  return consecutive(lastTime, lastDigits, count, () => {
    throw new Error('ULID overflow: 2^80 IDs in one millisecond')
  })
}

export const newUlid = (nowMs?: number): string => newUlids(1, nowMs)[0]
export { decodeTime as ulidTime }

/** `<ms>,<base64 of 10 random bytes>`: sent by the client, reused on every retry of one send. */
export function newIdSeed(nowMs = Date.now()): string {
  return `${nowMs},${randomBytes(ENTROPY_BYTES).toString('base64')}`
}

/**
 * Deterministic ULIDs from an ID seed: the seed's time, then its entropy plus the event's
 * index, so a retried request yields the same IDs (and, for events without `id`, the same
 * dedup keys). The ulid package has no way to take given entropy, hence this small encoder.
 */
export function seededUlids(seed: string, count: number): string[] {
  const match = /^(\d{1,15}),([A-Za-z0-9+/]{14}==)$/.exec(seed)
  if (!match)
    throw new SluiceError('ID_SEED_INVALID', 'x-service-event-id-seed: must be "<milliseconds>,<base64 of 10 bytes>"')
  const ms = Number(match[1])
  if (ms > 2 ** 48 - 1) throw new SluiceError('ID_SEED_INVALID', 'x-service-event-id-seed: time out of range')
  const entropy = Buffer.from(match[2], 'base64') // 80 bits = 16 base-32 digits, most significant first
  const digits = new Uint8Array(16)
  for (let d = 0; d < 16; d++) {
    const bit = d * 5
    const pair = (entropy[bit >> 3] << 8) | (entropy[(bit >> 3) + 1] ?? 0)
    digits[d] = (pair >> (11 - (bit & 7))) & 31
  }
  return consecutive(ms, digits, count, () => {}) // wraps past the top, as (entropy + i) mod 2^80
}

/** An ID's characters as bytes: each ID is then one string, not one per concatenated character. */
const text = Buffer.alloc(26)

/** `count` IDs at `ms`: the first from `digits`, each next one plus 1 (`digits` ends at the last). */
function consecutive(ms: number, digits: Uint8Array, count: number, onWrap: () => void): string[] {
  for (let i = 9, t = ms; i >= 0; i--, t = Math.floor(t / 32)) text[i] = CROCKFORD_CODES[t % 32]
  const ids = new Array<string>(count)
  for (let i = 0; i < count; i++) {
    if (i > 0 && !increment(digits)) onWrap()
    for (let d = 0; d < 16; d++) text[10 + d] = CROCKFORD_CODES[digits[d]]
    ids[i] = text.toString('latin1')
  }
  return ids
}

/** Adds 1 to 16 base-32 digits; false when it wrapped around to zero. */
function increment(digits: Uint8Array): boolean {
  for (let i = 15; i >= 0; i--) {
    if (digits[i] < 31) {
      digits[i]++
      return true
    }
    digits[i] = 0
  }
  return false
}

export function isUlid(value: string): boolean {
  return /^[0-9A-HJKMNP-TV-Z]{26}$/.test(value)
}
