// Single sign-on with OpenID Connect (docs/teams.md): the authorization code flow with PKCE, through
// `openid-client` (OpenID Certified). `GET /v1/auth/oidc/login` sends the browser to the provider with
// a fresh state, nonce and code challenge (kept ten minutes in the control plane, so any api process
// takes the callback); `GET /v1/auth/oidc/callback` checks the answer (state, PKCE, the ID token's
// signature, issuer, audience and nonce), reads the role claim, makes the user on their first sign-in
// (their role and environments follow the claim at every sign-in), and starts a session as a password
// sign-in does. `GET /v1/auth/providers` tells the dashboard which sign-ins there are.
import { createHash } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import * as oidc from 'openid-client'
import { SluiceError } from '../core/errors.ts'
import { ROLES, type Role } from '../core/permissions.ts'
import type { ControlStore } from '../control/types.ts'
import type { Users } from '../control/users.ts'
import type { AuditEntry } from './audit.ts'
import { One } from './schemas.ts'
import { setSessionCookie } from './users.ts'

const PENDING_MS = 10 * 60_000
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex')

export interface OidcSettings {
  issuer: string
  clientId: string
  clientSecret: string
  roleClaim: string
  publicUrl: string
}

/** `editor` or `editor:staging,qa` → the role and environments; undefined for anything else. */
export function roleFromClaim(value: unknown): { role: Role; envs?: string[] } | undefined {
  if (typeof value !== 'string') return undefined
  const [role, envs] = value.trim().split(/:(.*)/s)
  if (!(ROLES as readonly string[]).includes(role)) return undefined
  const list = (envs ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
  return { role: role as Role, ...(list.length > 0 && { envs: list }) }
}

export function oidcRoutes(deps: {
  settings?: OidcSettings
  users: Users
  control: ControlStore
  audit(request: FastifyRequest, entry: Partial<AuditEntry>): Promise<void>
}) {
  const { settings } = deps
  let discovered: Promise<oidc.Configuration> | undefined
  // Discovered on first use and kept; a failed discovery is tried again at the next sign-in.
  const configuration = () => {
    if (!settings) throw new Error('unreachable: the SSO routes exist only with settings')
    discovered ??= oidc
      .discovery(
        new URL(settings.issuer),
        settings.clientId,
        undefined,
        oidc.ClientSecretBasic(settings.clientSecret),
        // A provider on plain HTTP (a test's, a lab's) is let through only when the issuer says http.
        settings.issuer.startsWith('http:') ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .catch((err) => {
        discovered = undefined
        throw new SluiceError('SSO_FAILED', `sso: the provider's discovery failed (${(err as Error).message})`)
      })
    return discovered
  }
  const redirectUri = settings ? new URL('/v1/auth/oidc/callback', settings.publicUrl).href : ''

  return async (app: FastifyInstance) => {
    const tags = ['Users and sign-in']
    app.get(
      '/v1/auth/providers',
      {
        schema: {
          public: true,
          permission: 'auth:read',
          tags,
          summary: 'The sign-ins this server offers (the dashboard reads it)',
          response: { 200: One(Type.Object({ password: Type.Boolean(), sso: Type.Boolean() })) },
        },
      },
      async () => ({ data: { password: true, sso: settings !== undefined } }),
    )
    // The browser's side of the flow (redirects, not JSON), only where SSO is configured; left out of
    // the OpenAPI document, docs/teams.md describes them.
    if (!settings) return
    app.get(
      '/v1/auth/oidc/login',
      {
        schema: {
          public: true,
          permission: 'auth:read',
          tags,
          hide: true,
          summary: 'Start single sign-on: redirects to the OpenID Provider',
        },
      },
      async (_request, reply) => {
        const config = await configuration()
        const verifier = oidc.randomPKCECodeVerifier()
        const state = oidc.randomState()
        const nonce = oidc.randomNonce()
        await deps.control.put('oidcLogin', sha256(state), {
          id: sha256(state),
          verifier,
          nonce,
          expiresAt: Date.now() + PENDING_MS,
        })
        for (const p of deps.control.list('oidcLogin'))
          if (p.expiresAt <= Date.now()) await deps.control.delete('oidcLogin', p.id)
        const url = oidc.buildAuthorizationUrl(config, {
          redirect_uri: redirectUri,
          scope: 'openid email profile',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
          nonce,
        })
        return reply.redirect(url.href, 302)
      },
    )
    app.get<{ Querystring: { state?: string } }>(
      '/v1/auth/oidc/callback',
      {
        schema: {
          public: true,
          permission: 'auth:read',
          tags,
          hide: true,
          summary: "The provider's answer: starts a session and redirects to the dashboard",
          querystring: Type.Object({ state: Type.Optional(Type.String()) }, { additionalProperties: true }),
        },
      },
      async (request, reply) => {
        const config = await configuration()
        const state = request.query.state ?? ''
        const pending = deps.control.get('oidcLogin', sha256(state))
        if (pending) await deps.control.delete('oidcLogin', pending.id) // used once
        if (!pending || pending.expiresAt <= Date.now())
          throw new SluiceError('SSO_FAILED', 'state: no sign-in under way with it (expired or used); start again')
        let claims: oidc.IDToken | undefined
        try {
          const tokens = await oidc.authorizationCodeGrant(config, new URL(request.url, settings!.publicUrl), {
            pkceCodeVerifier: pending.verifier,
            expectedState: state,
            expectedNonce: pending.nonce,
            idTokenExpected: true,
          })
          claims = tokens.claims()
        } catch (err) {
          throw new SluiceError('SSO_FAILED', `sso: ${(err as Error).message}`)
        }
        if (!claims) throw new SluiceError('SSO_FAILED', 'sso: the provider answered no ID token')
        const email = typeof claims.email === 'string' ? claims.email : undefined
        if (!email) throw new SluiceError('SSO_FAILED', 'email: the ID token has no email claim (scope email)')
        const granted = roleFromClaim(claims[settings!.roleClaim])
        if (!granted) {
          await deps.audit(request, { actor: { kind: 'user', name: email }, action: 'auth:login', status: 403 })
          throw new SluiceError(
            'SSO_ROLE_MISSING',
            `${settings!.roleClaim}: the ID token must give viewer, editor or admin (optionally :env,env)`,
          )
        }
        const identity = { issuer: claims.iss, subject: claims.sub }
        const known = deps.users
          .list()
          .find((u) => u.sso?.issuer === identity.issuer && u.sso.subject === identity.subject)
        if (!known && deps.users.byEmail(email))
          throw new SluiceError(
            'SSO_FAILED',
            `email: ${email} signs in with a password here; an admin removes that user first`,
          )
        const user = known
          ? await deps.users.update(known.id, granted)
          : await deps.users.add({ email, role: granted.role, envs: granted.envs, sso: identity })
        await deps.users.sweep()
        const started = await deps.users.startSession(user)
        setSessionCookie(request, reply, started.session)
        await deps.audit(request, {
          actor: { kind: 'user', name: user.email, user_id: user.id },
          action: 'auth:login',
          status: 200,
        })
        return reply.redirect('/dashboard/#/events', 302)
      },
    )
  }
}

export const oidcSettingsOf = (config: {
  oidcIssuer?: string
  oidcClientId?: string
  oidcClientSecret?: string
  oidcRoleClaim: string
  publicUrl?: string
}): OidcSettings | undefined =>
  config.oidcIssuer && config.oidcClientId && config.oidcClientSecret && config.publicUrl
    ? {
        issuer: config.oidcIssuer,
        clientId: config.oidcClientId,
        clientSecret: config.oidcClientSecret,
        roleClaim: config.oidcRoleClaim,
        publicUrl: config.publicUrl,
      }
    : undefined
