import { randomBytes } from 'node:crypto'
import { monotonicFactory, decodeTime } from 'ulid'
import { SluiceError } from './errors.ts'

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const ENTROPY_BYTES = 10

export const newUlid: (nowMs?: number) => string = monotonicFactory()
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
  if (!match) throw new SluiceError('ID_SEED_INVALID', 'x-service-event-id-seed: must be "<milliseconds>,<base64 of 10 bytes>"')
  const ms = Number(match[1])
  if (ms > 2 ** 48 - 1) throw new SluiceError('ID_SEED_INVALID', 'x-service-event-id-seed: time out of range')
  const entropy = BigInt('0x' + Buffer.from(match[2], 'base64').toString('hex'))
  const time = encodeBase32(BigInt(ms), 10)
  const ids = new Array<string>(count)
  const max = 1n << 80n
  for (let i = 0; i < count; i++) ids[i] = time + encodeBase32((entropy + BigInt(i)) % max, 16)
  return ids
}

function encodeBase32(value: bigint, length: number): string {
  let out = ''
  for (let i = 0; i < length; i++) {
    out = CROCKFORD[Number(value & 31n)] + out
    value >>= 5n
  }
  return out
}

export function isUlid(value: string): boolean {
  return /^[0-9A-HJKMNP-TV-Z]{26}$/.test(value)
}
