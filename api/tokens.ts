// REST: API tokens (control/tokens.ts). `POST /v1/tokens {name, role, envs?, expires_in_days?}` → 201
// with the token, shown once; `GET /v1/tokens` (never a secret; when each was last used);
// `DELETE /v1/tokens/<id>`, refused at once by every api process. Admins only.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { TokenDoc } from '../control/types.ts'
import type { Tokens } from '../control/tokens.ts'
import { ROLES } from '../core/permissions.ts'
import { errors, List, Nullable, One, Time } from './schemas.ts'

const Token = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: Type.Union(ROLES.map((r) => Type.Literal(r))),
  envs: Nullable(Type.Array(Type.String(), { description: 'The environments it acts in; null: every one' })),
  prefix: Type.String({ description: "The token's first characters, to tell tokens apart" }),
  created_at: Time('Creation'),
  expires_at: Nullable(Time('Expiry')),
  last_used_at: Nullable(Time('Last use (to the minute)')),
})
const CreatedToken = Type.Object({
  ...Token.properties,
  token: Type.String({ description: 'Shown once, never again' }),
})
const CreateToken = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    role: Type.Union(ROLES.map((r) => Type.Literal(r))),
    envs: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })),
    expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
  },
  { additionalProperties: false, examples: [{ name: 'ci-deploys', role: 'editor', envs: ['staging'] }] },
)

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())
export const presentToken = (t: TokenDoc, lastUsedAt?: number) => ({
  id: t.id,
  name: t.name,
  role: t.role,
  envs: t.envs ?? null,
  prefix: t.prefix,
  created_at: new Date(t.createdAt).toISOString(),
  expires_at: iso(t.expiresAt),
  last_used_at: iso(lastUsedAt),
})

export function tokensRoutes(deps: { tokens: Tokens }) {
  return async (app: FastifyInstance) => {
    const tags = ['API tokens']
    app.post<{ Body: Static<typeof CreateToken> }>(
      '/v1/tokens',
      {
        schema: {
          permission: 'tokens:admin',
          tags,
          summary: 'Create an API token (shown once)',
          body: CreateToken,
          response: { 201: One(CreatedToken), ...errors(400, 401, 403, 404, 409) },
        },
      },
      async (request, reply) => {
        const b = request.body
        const { doc, token } = await deps.tokens.create({
          name: b.name,
          role: b.role,
          envs: b.envs,
          expiresInDays: b.expires_in_days,
        })
        reply.code(201)
        return { data: { ...presentToken(doc), token } }
      },
    )
    app.get(
      '/v1/tokens',
      {
        schema: {
          permission: 'tokens:admin',
          tags,
          summary: 'API tokens (never the token itself)',
          response: { 200: List(Token), ...errors(401, 403) },
        },
      },
      async () => ({ data: deps.tokens.list().map((t) => presentToken(t, deps.tokens.lastUsed(t.id))), metadata: {} }),
    )
    app.delete<{ Params: { id: string } }>(
      '/v1/tokens/:id',
      {
        schema: {
          permission: 'tokens:admin',
          tags,
          summary: 'Delete an API token: refused from then on, by every api process',
          params: Type.Object({ id: Type.String() }),
          response: { 200: One(Token), ...errors(401, 403, 404) },
        },
      },
      async (request) => ({ data: presentToken(await deps.tokens.remove(request.params.id)) }),
    )
  }
}

const Me = Type.Object({
  kind: Type.String({ description: 'signing-key, token, user or dev' }),
  name: Nullable(Type.String({ description: "The token's name, or the user's email" })),
  role: Type.Union(ROLES.map((r) => Type.Literal(r))),
  envs: Nullable(Type.Array(Type.String())),
  csrf_token: Type.Optional(
    Type.String({ description: "A signed-in user's: sent in x-csrf-token by every change made with the cookie" }),
  ),
})

/** Who the caller is: the dashboard shows it and hides what the role may not do. */
export function meRoute() {
  return async (app: FastifyInstance) => {
    app.get(
      '/v1/auth/me',
      {
        schema: {
          permission: 'auth:read',
          tags: ['API tokens'],
          summary:
            'Who is calling: the signing key, a token or a signed-in user (name, role and environments), or dev mode',
          response: { 200: One(Me), ...errors(401) },
        },
      },
      async (request) => {
        const p = request.principal!
        return {
          data: {
            kind: p.kind,
            name: p.kind === 'token' || p.kind === 'user' ? p.name : null,
            role: p.role,
            envs: p.kind === 'token' || p.kind === 'user' ? (p.envs ?? null) : null,
            ...(p.kind === 'user' && { csrf_token: p.csrf }),
          },
        }
      },
    )
  }
}
