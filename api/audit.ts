// The audit log: every change made through the REST API, and every refusal of one, as an event
// `sluice/audit` (so it is stored, append-only, in each mode's event store: RocksDB embedded, the
// ClickHouse `events` table distributed, where analysts query it). Who (the signing key, a token's
// name, dev mode), what (the route's permission and method), which target (the route's parameters and
// a created resource's ID; a webhook's ID, a secret, only as its fingerprint), when, from where.
// Never a body: `GET /v1/audit` and docs/teams.md.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { newUlid } from '../core/ids.ts'
import { fingerprint } from '../core/fingerprint.ts'
import { PRODUCTION } from '../core/env-names.ts'
import type { EventRecord } from '../core/event.ts'
import type { EventStore } from '../store/types.ts'
import type { Envs } from '../control/envs.ts'
import { errors, Page, Time } from './schemas.ts'

export const AUDIT_EVENT = 'sluice/audit'
const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

declare module 'fastify' {
  interface FastifyRequest {
    /** The ID a change created, read from its answer for the audit entry. */
    auditCreated?: string
  }
}

export interface AuditEntry {
  actor: { kind: string; name?: string; token_id?: string }
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

export function auditHooks(deps: { publish(events: EventRecord[]): Promise<void>; envs: Envs }) {
  return {
    /** onSend: a creation's ID, from its answer (`data.id`). */
    onSend: async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      if (READS.has(request.method) || reply.statusCode >= 300 || typeof payload !== 'string') return payload
      if (payload.startsWith('{"data":{"id":"')) request.auditCreated = /^\{"data":\{"id":"([^"]+)"/.exec(payload)?.[1]
      return payload
    },
    /** onResponse: the entry, for every change and every change refused for its role. */
    onResponse: async (request: FastifyRequest, reply: FastifyReply) => {
      const permission = request.routeOptions.schema?.permission
      if (READS.has(request.method) || !permission) return
      if (reply.statusCode >= 400 && reply.statusCode !== 403) return
      const p = request.principal
      const env = (request.query as { env?: unknown })?.env ?? (request.params as { name?: unknown })?.name
      const entry: AuditEntry = {
        actor: p?.kind === 'token' ? { kind: 'token', name: p.name, token_id: p.id } : { kind: p?.kind ?? 'unknown' },
        action: permission,
        method: request.method,
        route: request.routeOptions.url ?? '',
        target: targetOf(request),
        status: reply.statusCode,
        address: request.ip,
        ...(typeof env === 'string' && { env }),
      }
      const now = Date.now()
      const id = newUlid()
      const recordEnv = typeof env === 'string' && deps.envs.get(env) ? env : PRODUCTION
      const record: EventRecord = {
        internalId: id,
        id,
        name: AUDIT_EVENT,
        data: entry as unknown as Record<string, unknown>,
        ts: now,
        env: recordEnv,
        receivedAt: now,
        source: { kind: 'api' },
      }
      await deps.publish([record]).catch((err) => request.log.error({ err }, 'audit entry not written'))
    },
  }
}

const AuditQuery = Type.Object({
  actor: Type.Optional(Type.String({ description: "A token's name, or signing-key / dev" })),
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
  }),
  action: Type.String(),
  method: Type.String(),
  route: Type.String(),
  target: Type.Record(Type.String(), Type.String()),
  status: Type.Integer(),
  address: Type.String(),
  env: Type.Optional(Type.String()),
})

export function auditRoutes(deps: { events: EventStore }) {
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: Static<typeof AuditQuery> }>(
      '/v1/audit',
      {
        schema: {
          permission: 'audit:admin',
          tags: ['Audit'],
          summary: 'The audit log, newest first: every change and every refused one',
          querystring: AuditQuery,
          response: { 200: Page(Entry), ...errors(400, 401, 403) },
        },
      },
      async (request) => {
        const q = request.query
        const page = await deps.events.queryEvents({
          name: AUDIT_EVENT,
          ...(q.since !== undefined && { receivedAfter: q.since }),
          ...(q.until !== undefined && { receivedBefore: q.until }),
          limit: q.limit ?? 100,
          ...(q.cursor && { cursor: q.cursor }),
        })
        const entries = page.events
          .map((e) => ({
            id: e.internalId,
            at: new Date(e.receivedAt).toISOString(),
            ...(e.data as unknown as AuditEntry),
          }))
          .filter((e) => q.actor === undefined || (e.actor.name ?? e.actor.kind) === q.actor)
          .filter((e) => q.action === undefined || e.action === q.action)
          .filter((e) => q.env === undefined || e.env === q.env)
        return { data: entries, metadata: { cursor: page.nextCursor, limit: q.limit ?? 100 } }
      },
    )
  }
}
