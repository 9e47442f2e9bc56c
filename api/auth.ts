import { timingSafeEqual, createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { SluiceError } from '../core/errors.ts'

/** The REST API's guard: `Authorization: Bearer <signing key>`, open in dev mode. */
export function signingKeyGuard(devMode: boolean, signingKey: string | undefined) {
  const expected = signingKey ? createHash('sha256').update(signingKey).digest() : undefined
  return async (request: FastifyRequest) => {
    if (devMode) return
    const header = request.headers.authorization ?? ''
    // The scheme is case-insensitive (RFC 9110, 11.1).
    const token = /^bearer +(.*)$/is.exec(header)?.[1] ?? ''
    // Hashes of equal length are compared, so neither the length nor a prefix of the key leaks.
    const given = createHash('sha256').update(token).digest()
    if (!expected || !timingSafeEqual(given, expected))
      throw new SluiceError('UNAUTHORIZED', 'authorization: expected "Bearer <signing key>"')
  }
}
