// A secret (webhook ID, event key, signing key, signature) as it may appear in a log line or
// an error: the first 8 hex characters of its sha256. Enough to tell a handful apart and to
// match a log line to a known secret; useless for posting through a webhook URL or a key.
import { createHash } from 'node:crypto'

export function fingerprint(secret: string): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 8)
}

/** A request path fit for an error message: no query, and every long segment (a key, a webhook ID) fingerprinted. */
export function safePath(url: string): string {
  const path = url.split('?')[0]
  return path
    .split('/')
    .map((segment) => (segment.length >= 20 ? `{${fingerprint(segment)}}` : segment))
    .join('/')
}
