import pino, { type DestinationStream, type Logger } from 'pino'
import { fingerprint } from '../core/fingerprint.ts'

/**
 * Log lines name secrets by fingerprint (core/fingerprint.ts) where they name them at all.
 * `redact` is the second line of defence: a secret that slips into one of these well-known
 * fields anyway is logged as its fingerprint, a raw body or header set as a placeholder.
 */
const SECRET_FIELDS = ['webhookId', 'key', 'eventKey', 'signingKey', 'secret', 'signature', 'authorization']
const PAYLOAD_FIELDS = ['body', 'rawBody', 'raw', 'headers']
const REDACT_PATHS = [...SECRET_FIELDS, ...PAYLOAD_FIELDS].flatMap((field) => [field, `*.${field}`])

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const censor = (value: unknown) =>
    typeof value === 'string' && value !== '' ? `{${fingerprint(value)}}` : '[redacted]'
  return pino({ level, base: undefined, redact: { paths: REDACT_PATHS, censor } }, destination)
}
