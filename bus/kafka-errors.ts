// Why the Kafka Bus could not connect, as the error catalogue names it: a refused login or an
// untrusted certificate is a setting to fix, said once and naming the setting; anything else is an
// outage (LOG_UNAVAILABLE). The password is never part of the message.
import { SluiceError } from '../core/errors.ts'
import type { KafkaBusConfig } from './kafka-config.ts'
import type { ErrorLink } from './kafka-port.ts'

// Node's TLS verification failures: the brokers' certificate is not signed by a CA we trust.
const UNTRUSTED_CERTIFICATE_CODES: ReadonlySet<string> = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
])

/** An error, its causes (`cause`, kafkajs' `originalError`) and the errors it groups (`errors`), flattened. */
export function errorChain(err: unknown): ErrorLink[] {
  const out: ErrorLink[] = []
  const visit = (e: unknown, depth: number) => {
    if (!e || typeof e !== 'object' || depth > 6 || out.length > 50) return
    out.push(e as ErrorLink)
    const links = e as { cause?: unknown; originalError?: unknown; errors?: unknown }
    if (Array.isArray(links.errors)) for (const inner of links.errors) visit(inner, depth + 1)
    visit(links.originalError, depth + 1)
    visit(links.cause, depth + 1)
  }
  visit(err, 0)
  return out
}

export function connectError(
  err: unknown,
  config: KafkaBusConfig,
  saslRefused: (link: ErrorLink) => boolean,
): SluiceError {
  const chain = errorChain(err)
  const where = config.brokers.join(',')
  if (chain.some(saslRefused)) {
    const how = `SASL ${config.sasl?.mechanism ?? ''} as ${config.sasl?.username ?? '?'}`
    const setting = 'kafkaUsername / kafkaPassword (SLUICE_KAFKA_USERNAME / SLUICE_KAFKA_PASSWORD)'
    return new SluiceError('CREDENTIALS_REJECTED', `${setting}: Kafka at ${where} refused ${how}`, { cause: err })
  }
  const tls = chain.find((e) => typeof e.code === 'string' && UNTRUSTED_CERTIFICATE_CODES.has(e.code))
  if (tls) {
    const setting = 'kafkaCaFile (--kafka-ca-file / SLUICE_KAFKA_CA_FILE)'
    const message = `${setting}: the certificate of Kafka at ${where} is not trusted (${tls.code})`
    return new SluiceError('CERTIFICATE_UNTRUSTED', message, { cause: err })
  }
  return new SluiceError('LOG_UNAVAILABLE', `cannot reach Kafka at ${where}`, { cause: err })
}
