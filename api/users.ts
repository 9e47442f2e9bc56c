// REST: people and their sessions (control/users.ts, docs/teams.md). `POST /v1/users {email, password,
// role, envs?}`, `GET /v1/users`, `DELETE /v1/users/<id>` (admins); `POST /v1/auth/login {email,
// password}` sets the `sluice_session` cookie (HttpOnly, SameSite=Strict, Secure behind TLS) and answers
// the CSRF token that state-changing requests made with the cookie send in `x-csrf-token`;
// `POST /v1/auth/logout` ends the session. Wrong passwords: 401 LOGIN_FAILED, and 429 LOGIN_THROTTLED
// once an account or an address has failed too often. A password is never answered, logged or audited.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { SluiceError } from '../core/errors.ts'
import { ROLES } from '../core/permissions.ts'
import type { UserDoc } from '../control/types.ts'
import { SESSION_MS, type Users } from '../control/users.ts'
import type { AuditEntry } from './audit.ts'
import { createLoginThrottle } from './login-throttle.ts'
import { errors, List, Nullable, One, Time } from './schemas.ts'

export const SESSION_COOKIE = 'sluice_session'

const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.Union(ROLES.map((r) => Type.Literal(r))),
  envs: Nullable(Type.Array(Type.String(), { description: 'The environments they act in; null: every one' })),
  sign_in: Type.Union([Type.Literal('password'), Type.Literal('sso')]),
  created_at: Time('Creation'),
})
const CreateUser = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    password: Type.String({ minLength: 12, maxLength: 1024, description: 'At least 12 characters' }),
    role: Type.Union(ROLES.map((r) => Type.Literal(r))),
    envs: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })),
  },
  { additionalProperties: false, examples: [{ email: 'ana@example.com', password: '…', role: 'editor' }] },
)
const Login = Type.Object(
  { email: Type.String({ maxLength: 254 }), password: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
)
const SignedIn = Type.Object({
  user: User,
  csrf_token: Type.String({ description: 'Sent in x-csrf-token by every state-changing request made with the cookie' }),
  expires_at: Time('When the session ends'),
})

export const presentUser = (u: UserDoc) => ({
  id: u.id,
  email: u.email,
  role: u.role,
  envs: u.envs ?? null,
  sign_in: u.sso ? ('sso' as const) : ('password' as const),
  created_at: new Date(u.createdAt).toISOString(),
})

/** Sets the session cookie: HttpOnly, SameSite=Strict, Secure when the request came over TLS. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, session: string): void {
  reply.setCookie(SESSION_COOKIE, session, {
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https',
    maxAge: SESSION_MS / 1000,
  })
}

export function usersRoutes(deps: {
  users: Users
  audit(request: FastifyRequest, entry: Partial<AuditEntry>): Promise<void>
}) {
  const throttle = createLoginThrottle()
  return async (app: FastifyInstance) => {
    const tags = ['Users and sign-in']
    app.post<{ Body: Static<typeof CreateUser> }>(
      '/v1/users',
      {
        schema: {
          permission: 'users:admin',
          tags,
          summary: 'Add a user who signs in with an email and a password',
          body: CreateUser,
          response: { 201: One(User), ...errors(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        const doc = await deps.users.add(request.body)
        reply.code(201)
        return { data: presentUser(doc) }
      },
    )
    app.get(
      '/v1/users',
      {
        schema: {
          permission: 'users:admin',
          tags,
          summary: 'Users (never a password)',
          response: { 200: List(User), ...errors(401) },
        },
      },
      async () => ({ data: deps.users.list().map(presentUser), metadata: {} }),
    )
    app.delete<{ Params: { id: string } }>(
      '/v1/users/:id',
      {
        schema: {
          permission: 'users:admin',
          tags,
          summary: 'Remove a user; their sessions end at once',
          params: Type.Object({ id: Type.String() }),
          response: { 200: One(User), ...errors(401, 404) },
        },
      },
      async (request) => ({ data: presentUser(await deps.users.remove(request.params.id)) }),
    )
    app.post<{ Body: Static<typeof Login> }>(
      '/v1/auth/login',
      {
        schema: {
          public: true,
          permission: 'auth:read',
          tags,
          summary: 'Sign in with an email and a password: sets the sluice_session cookie',
          body: Login,
          response: { 200: One(SignedIn), ...errors(400, 401, 429) },
        },
      },
      async (request, reply) => {
        const { email, password } = request.body
        const wait = throttle.waitSeconds(email, request.ip)
        if (wait > 0) {
          reply.header('retry-after', String(wait))
          throw new SluiceError('LOGIN_THROTTLED', `email: too many failed sign-ins; retry after ${wait} s`)
        }
        const user = await deps.users.checkPassword(email, password)
        if (!user) {
          throttle.failed(email, request.ip)
          await deps.audit(request, {
            actor: { kind: 'user', name: email.trim().toLowerCase() },
            action: 'auth:login',
            status: 401,
          })
          throw new SluiceError('LOGIN_FAILED', 'email or password: no user signs in with these')
        }
        throttle.succeeded(email)
        await deps.users.sweep()
        const started = await deps.users.startSession(user)
        setSessionCookie(request, reply, started.session)
        await deps.audit(request, {
          actor: { kind: 'user', name: user.email, user_id: user.id },
          action: 'auth:login',
          status: 200,
        })
        return {
          data: {
            user: presentUser(user),
            csrf_token: started.csrf,
            expires_at: new Date(started.expiresAt).toISOString(),
          },
        }
      },
    )
    app.post(
      '/v1/auth/logout',
      {
        schema: {
          permission: 'auth:read',
          tags,
          summary: "End the caller's session (and clear its cookie)",
          response: { 200: One(Type.Object({ signed_out: Type.Boolean() })), ...errors(401) },
        },
      },
      async (request, reply) => {
        const session = request.cookies[SESSION_COOKIE]
        if (session) await deps.users.endSession(session)
        reply.clearCookie(SESSION_COOKIE, { path: '/' })
        return { data: { signed_out: request.principal?.kind === 'user' } }
      },
    )
  }
}
