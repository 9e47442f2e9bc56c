// The REST API's guard: who is calling (the signing key, an API token, a signed-in user's session
// cookie, or anyone in dev mode), and whether its role holds the permission the route declares in its
// schema (core/permissions.ts). A state-changing request made with the cookie carries the session's
// CSRF token in `x-csrf-token`; a bearer credential needs none (a browser never sends one by itself).
import { timingSafeEqual, createHash } from 'node:crypto'
import type { FastifyRequest, RouteOptions } from 'fastify'
import { SluiceError } from '../core/errors.ts'
import { BRANCH_GROUP } from '../core/env-names.ts'
import { isPermission, roleAllows, roleNeeded, type Permission, type Role } from '../core/permissions.ts'
import type { Tokens } from '../control/tokens.ts'
import type { Users } from '../control/users.ts'

declare module 'fastify' {
  interface FastifySchema {
    /** What the route needs: `<area>:read|write|admin` (core/permissions.ts). Every /v1 route has one. */
    permission?: Permission
    /** Open to anyone (signing in): no credential is asked for. */
    public?: boolean
  }
  interface FastifyRequest {
    /** Who the REST API's guard let in. */
    principal?: Principal
  }
}

export type Principal =
  | { kind: 'dev'; role: 'admin' }
  | { kind: 'signing-key'; role: 'admin' }
  | { kind: 'token'; id: string; name: string; role: Role; envs?: string[] }
  | { kind: 'user'; id: string; name: string; role: Role; envs?: string[]; csrf: string }

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}

const bearerOf = (request: FastifyRequest) =>
  // The scheme is case-insensitive (RFC 9110, 11.1).
  /^bearer +(.*)$/is.exec(request.headers.authorization ?? '')?.[1] ?? ''

/** The REST API's guard: `Authorization: Bearer <signing key>`, open in dev mode. */
export function signingKeyGuard(devMode: boolean, signingKey: string | undefined) {
  const expected = signingKey ? createHash('sha256').update(signingKey).digest() : undefined
  return async (request: FastifyRequest) => {
    if (devMode) return
    // Hashes of equal length are compared, so neither the length nor a prefix of the key leaks.
    const given = createHash('sha256').update(bearerOf(request)).digest()
    if (!expected || !timingSafeEqual(given, expected))
      throw new SluiceError('UNAUTHORIZED', 'authorization: expected "Bearer <signing key>"')
  }
}

/**
 * onRequest: the caller, then its role against the route's permission. The environments a token is
 * narrowed to are checked once the request is parsed (`envGuard`, preHandler).
 */
export function accessGuard(config: { devMode: boolean; signingKey?: string; tokens: Tokens; users?: Users }) {
  const isSigningKey = config.signingKey ? signingKeyGuard(false, config.signingKey) : undefined
  return async (request: FastifyRequest) => {
    const permission = request.routeOptions.schema?.permission
    if (request.routeOptions.schema?.public) return
    if (config.devMode) {
      request.principal = { kind: 'dev', role: 'admin' }
      return
    }
    const bearer = bearerOf(request)
    const token = bearer.startsWith('slt_') ? config.tokens.authenticate(bearer) : undefined
    const cookie = bearer === '' ? request.cookies?.sluice_session : undefined
    const signedIn = cookie && config.users ? config.users.session(cookie) : undefined
    if (token) request.principal = { kind: 'token', id: token.id, name: token.name, role: token.role, envs: token.envs }
    else if (signedIn) {
      const { user, session } = signedIn
      request.principal = {
        kind: 'user',
        id: user.id,
        name: user.email,
        role: user.role,
        envs: user.envs,
        csrf: session.csrf,
      }
      const given = request.headers['x-csrf-token']
      if (!SAFE.has(request.method) && (typeof given !== 'string' || !sameSecret(given, session.csrf)))
        throw new SluiceError(
          'CSRF_TOKEN_INVALID',
          "x-csrf-token: a change made with the session cookie needs the session's CSRF token",
        )
    } else if (
      bearer !== '' &&
      isSigningKey &&
      (await isSigningKey(request).then(
        () => true,
        () => false,
      ))
    )
      request.principal = { kind: 'signing-key', role: 'admin' }
    else
      throw new SluiceError(
        'UNAUTHORIZED',
        cookie
          ? 'sluice_session: the session has ended; sign in again'
          : 'authorization: expected "Bearer <signing key or API token>", or a signed-in session',
      )
    if (permission && !roleAllows(request.principal.role, permission))
      throw new SluiceError(
        'FORBIDDEN',
        `permission ${permission}: needs the role ${roleNeeded(permission)}; this ${request.principal.kind === 'user' ? 'user' : 'token'}'s role is ${request.principal.role}`,
      )
  }
}

/**
 * preHandler: a token narrowed to environments acts only in those, named by the request; `branch` in
 * its list covers the branch group and every branch environment (`isBranch`).
 */
export function envGuard(isBranch: (env: string) => boolean) {
  return async (request: FastifyRequest): Promise<void> => {
    const p = request.principal
    if ((p?.kind !== 'token' && p?.kind !== 'user') || !p.envs) return
    // Who is calling, signing out, and the list of environments (narrowed to its own) name none.
    if (request.routeOptions.schema?.permission?.startsWith('auth:')) return
    if (request.method === 'GET' && request.routeOptions.url === '/v1/envs') return
    const env = envOf(request)
    if (env === undefined)
      throw new SluiceError(
        'FORBIDDEN',
        `env: this ${p.kind} acts in ${p.envs.join(', ')} only; name the environment (?env=)`,
      )
    if (!p.envs.includes(env) && !(p.envs.includes(BRANCH_GROUP) && isBranch(env)))
      throw new SluiceError('FORBIDDEN', `env: this ${p.kind} acts in ${p.envs.join(', ')} only, not in "${env}"`)
  }
}

function envOf(request: FastifyRequest): string | undefined {
  const pick = (o: unknown, key: string) => {
    const v = (o as Record<string, unknown> | null | undefined)?.[key]
    return typeof v === 'string' && v !== '' ? v : undefined
  }
  const isEnvRoute = request.routeOptions.url?.startsWith('/v1/envs/:name')
  return (
    pick(request.query, 'env') ??
    pick(request.params, 'env') ??
    pick(request.body, 'env') ??
    (isEnvRoute ? pick(request.params, 'name') : undefined)
  )
}

/** onRoute: a /v1 route without a permission is a bug, refused when the server starts. */
export function requirePermission(route: RouteOptions): void {
  if (!route.url.startsWith('/v1/') || route.method === 'OPTIONS' || route.method === 'HEAD') return
  if (!isPermission(route.schema?.permission))
    throw new Error(`${route.method} ${route.url} declares no permission (schema.permission, core/permissions.ts)`)
}
