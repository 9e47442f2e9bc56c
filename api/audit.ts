// The audit log: every change made through the REST API, every refusal of one, and every sign-in,
// in the audit store (store/audit-types.ts: RocksDB embedded, the ClickHouse table `audit_log`
// distributed, where analysts query it), apart from the events so that only admins read it. Who (a
// user, a token's name, the signing key, dev mode), what (the route's permission and method), which
// target (the route's parameters and a created resource's ID; a webhook's ID, a secret, only as its
// fingerprint), when, from where. Never a body: `GET /v1/audit` and docs/teams.md.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { newUlid } from '../core/ids.ts'
import { fingerprint } from '../core/fingerprint.ts'
import type { AuditStore } from '../store/audit-types.ts'
import { errors, Page, Time } from './schemas.ts'

const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

declare module 'fastify' {
  interface FastifyRequest {
    /** The ID a change created, read from its answer for the audit entry. */
    auditCreated?: string
  }
}

export interface AuditEntry {
  [field: string]: unknown
  actor: { kind: string; name?: string; token_id?: string; user_id?: string }
  action: string
  method: string
  route: string
  target: Record<string, string>
  status: number
  address: string
  env?: string
}

/** A webhook's ID is its URL's secret: only its fingerprint is written. */
function targetOf(request: FastifyRequest): Record<string, string> {
  const secret = request.routeOptions.url?.startsWith('/v1/webhooks') ?? false
  const shown = (v: string) => (secret ? `{${fingerprint(v)}}` : v)
  const target: Record<string, string> = {}
  for (const [k, v] of Object.entries((request.params as Record<string, unknown>) ?? {}))
    if (typeof v === 'string') target[k] = shown(v)
  if (request.auditCreated) target.created = shown(request.auditCreated)
  return target
}

export function auditHooks(deps: { audit: AuditStore }) {
  return {
    /**
     * onSend: the entry, for every change and every change refused for its role, written before the
     * answer leaves (an answered change is in the log), with a creation's ID from its answer (`data.id`).
     */
    onSend: async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const permission = request.routeOptions.schema?.permission
      if (READS.has(request.method) || !permission || request.routeOptions.schema?.public) return payload
      if (reply.statusCode >= 400 && reply.statusCode !== 403) return payload
      if (reply.statusCode < 300 && typeof payload === 'string' && payload.startsWith('{"data":{"id":"'))
        request.auditCreated = /^\{"data":\{"id":"([^"]+)"/.exec(payload)?.[1]
      await write(request, { status: reply.statusCode })
      return payload
    },
    /** An entry of the route's own (a sign-in, whose actor is who signed in), written when it resolves. */
    write: (request: FastifyRequest, entry: Partial<AuditEntry>) => write(request, entry),
  }

  async function write(request: FastifyRequest, given: Partial<AuditEntry>) {
    const p = request.principal
    const env = (request.query as { env?: unknown })?.env ?? (request.params as { name?: unknown })?.name
    const entry: AuditEntry = {
      actor:
        p?.kind === 'token'
          ? { kind: 'token', name: p.name, token_id: p.id }
          : p?.kind === 'user'
            ? { kind: 'user', name: p.name, user_id: p.id }
            : { kind: p?.kind ?? 'unknown' },
      action: request.routeOptions.schema?.permission ?? '',
      method: request.method,
      route: request.routeOptions.url ?? '',
      target: targetOf(request),
      status: 0,
      address: request.ip,
      ...(typeof env === 'string' && { env }),
      ...given,
    }
    const record = { id: newUlid(), at: Date.now(), entry }
    await deps.audit.append([record]).catch((err) => request.log.error({ err }, 'audit entry not written'))
  }
}

const AuditQuery = Type.Object({
  actor: Type.Optional(Type.String({ description: "A user's email, a token's name, or signing-key / dev" })),
  action: Type.Optional(Type.String({ description: 'A permission, e.g. webhooks:write' })),
  env: Type.Optional(Type.String()),
  since: Type.Optional(Type.Integer({ description: 'Received at or after (ms)' })),
  until: Type.Optional(Type.Integer({ description: 'Received before (ms)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  cursor: Type.Optional(Type.String()),
})
const Entry = Type.Object({
  id: Type.String(),
  at: Time('When'),
  actor: Type.Object({
    kind: Type.String(),
    name: Type.Optional(Type.String()),
    token_id: Type.Optional(Type.String()),
    user_id: Type.Optional(Type.String()),
  }),
  action: Type.String(),
  method: Type.String(),
  route: Type.String(),
  target: Type.Record(Type.String(), Type.String()),
  status: Type.Integer(),
  address: Type.String(),
  env: Type.Optional(Type.String()),
})

export function auditRoutes(deps: { audit: AuditStore }) {
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: Static<typeof AuditQuery> }>(
      '/v1/audit',
      {
        schema: {
          permission: 'audit:admin',
          tags: ['Audit'],
          summary: 'The audit log, newest first: every change, every refused one, every sign-in',
          querystring: AuditQuery,
          response: { 200: Page(Entry), ...errors(400, 401, 403) },
        },
      },
      async (request) => {
        const q = request.query
        const limit = q.limit ?? 100
        const page = await deps.audit.page({
          limit,
          ...(q.cursor && { before: q.cursor }),
          ...(q.since !== undefined && { since: q.since }),
          ...(q.until !== undefined && { until: q.until }),
          ...(q.actor !== undefined && { actor: q.actor }),
          ...(q.action !== undefined && { action: q.action }),
          ...(q.env !== undefined && { env: q.env }),
        })
        const data = page.records.map((r) => ({ id: r.id, at: new Date(r.at).toISOString(), ...r.entry }))
        return { data, metadata: { cursor: page.nextCursor, limit } }
      },
    )
  }
}
