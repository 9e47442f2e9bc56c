// The REST API (`/v1`, Bearer signing key, open in dev): snake_case JSON in {data, metadata}.
// Every route declares its schemas (api/schemas.ts): fastify validates the request against them
// and serializes the response through them, and /v1/openapi.json is generated from them.
import type { Static } from '@sinclair/typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Envs } from '../control/envs.ts'
import type { Keys } from '../control/keys.ts'
import { SluiceError } from '../core/errors.ts'
import { isUlid } from '../core/ids.ts'
import { BRANCH_GROUP } from '../core/env-names.ts'
import type { EventStore } from '../store/types.ts'
import { accessGuard, envGuard, requirePermission } from './auth.ts'
import type { Tokens } from '../control/tokens.ts'
import type { Users } from '../control/users.ts'
import fastifyCookie from '@fastify/cookie'
import { usersRoutes } from './users.ts'
import { oidcRoutes, type OidcSettings } from './oidc.ts'
import type { ControlStore } from '../control/types.ts'
import { auditHooks } from './audit.ts'
import type { AuditStore } from '../store/audit-types.ts'
import { presentEnv, presentEvent, presentKey } from './present.ts'
import { pageCursor, queryTime } from './query.ts'
import {
  CreatedKey,
  Env,
  EnvLimits,
  EnvName,
  EventsQuery,
  errors,
  IdParams,
  Key,
  List,
  One,
  Page,
  StoredEvent,
} from './schemas.ts'
import { absentBodyIsEmpty } from './validation.ts'

export interface ApiDeps {
  keys: Keys
  tokens: Tokens
  users: Users
  control: ControlStore
  /** Where audit entries go (api/audit.ts). */
  audit?: AuditStore
  envs: Envs
  events: EventStore
  log: Logger
  extraRoutes?: Array<(app: FastifyInstance) => Promise<void>>
}
export interface ApiConfig {
  devMode: boolean
  signingKey?: string
  /** Single sign-on, when configured (api/oidc.ts). */
  oidc?: OidcSettings
}

const NameParams = Type.Object({ name: Type.String({ description: 'Environment name' }) })
const CreateEnv = Type.Object(
  {
    name: EnvName,
    branch: Type.Optional(Type.Boolean({ description: 'A branch environment (one of a group)' })),
    ...EnvLimits,
  },
  { additionalProperties: false, examples: [{ name: 'staging', max_events_per_second: 500 }] },
)
const PatchEnv = Type.Object(EnvLimits, { additionalProperties: false, examples: [{ max_body_bytes: 1048576 }] })
const CreateKey = Type.Object({ env: Type.String({ examples: ['production'] }) }, { additionalProperties: false })

export function createApi(deps: ApiDeps, config: ApiConfig) {
  return {
    routes: async (app: FastifyInstance) => {
      app.addHook('onRoute', requirePermission)
      await app.register(fastifyCookie)
      app.addHook('onRequest', accessGuard({ ...config, tokens: deps.tokens, users: deps.users }))
      app.addHook(
        'preHandler',
        envGuard((env) => env === BRANCH_GROUP || deps.envs.get(env)?.kind === 'branch'),
      )
      const audit = deps.audit ? auditHooks({ audit: deps.audit }) : undefined
      if (audit) {
        app.addHook('onSend', audit.onSend)
      }
      const auditWrite = audit?.write ?? (async () => {})
      await usersRoutes({ users: deps.users, audit: auditWrite })(app)
      await oidcRoutes({ settings: config.oidc, users: deps.users, control: deps.control, audit: auditWrite })(app)
      const tags = ['Environments']
      app.get(
        '/v1/envs',
        {
          schema: {
            permission: 'envs:read',
            tags,
            summary: 'Environments',
            response: { 200: List(Env), ...errors(401) },
          },
        },
        async (request) => {
          // A user or token narrowed to environments sees those (and, with `branch`, the branch ones).
          const p = request.principal
          const narrowed = p && (p.kind === 'token' || p.kind === 'user') ? p.envs : undefined
          const visible = (e: { name: string; kind: string }) =>
            !narrowed || narrowed.includes(e.name) || (narrowed.includes(BRANCH_GROUP) && e.kind === 'branch')
          return {
            data: deps.envs
              .list()
              .filter(visible)
              .map((e) => presentEnv(deps.envs.inherited(e))),
            metadata: {},
          }
        },
      )
      app.post<{ Body: Static<typeof CreateEnv> }>(
        '/v1/envs',
        {
          schema: {
            permission: 'envs:admin',
            tags,
            summary: 'Create an environment',
            body: CreateEnv,
            response: { 201: One(Env), ...errors(400, 401, 409) },
          },
        },
        async (request, reply) => {
          const b = request.body
          const doc = await deps.envs.create({
            name: b.name,
            branch: b.branch,
            maxBodyBytes: b.max_body_bytes,
            maxEventsPerSecond: b.max_events_per_second,
            schemaMode: b.schema_mode,
            unknownNames: b.unknown_names,
            retentionDays: b.retention_days,
          })
          reply.code(201)
          return { data: presentEnv(deps.envs.inherited(doc)) }
        },
      )
      app.patch<{ Params: Static<typeof NameParams>; Body: Static<typeof PatchEnv> }>(
        '/v1/envs/:name',
        {
          preValidation: absentBodyIsEmpty,
          schema: {
            permission: 'envs:admin',
            tags,
            summary:
              "Change the limits, schema modes and retention of an environment (`branch`: the branch group's modes)",
            params: NameParams,
            body: PatchEnv,
            response: { 200: One(Env), ...errors(400, 401, 404) },
          },
        },
        async (request) => {
          const b = request.body
          const limits = {
            maxBodyBytes: b.max_body_bytes,
            maxEventsPerSecond: b.max_events_per_second,
            schemaMode: b.schema_mode,
            unknownNames: b.unknown_names,
            retentionDays: b.retention_days,
          }
          return { data: presentEnv(deps.envs.inherited(await deps.envs.update(request.params.name, limits))) }
        },
      )
      app.post<{ Params: Static<typeof NameParams> }>(
        '/v1/envs/:name/archive',
        {
          schema: {
            permission: 'envs:admin',
            tags,
            summary: 'Archive a branch environment',
            params: NameParams,
            response: { 200: One(Env), ...errors(400, 401, 404) },
          },
        },
        async (request) => ({ data: presentEnv(await deps.envs.archive(request.params.name)) }),
      )

      const keyTags = ['Event keys']
      app.get(
        '/v1/keys',
        {
          schema: {
            permission: 'keys:read',
            tags: keyTags,
            summary: 'Event keys (never the key itself)',
            response: { 200: List(Key), ...errors(401) },
          },
        },
        async () => ({ data: deps.keys.list().map(presentKey), metadata: {} }),
      )
      app.post<{ Body: Static<typeof CreateKey> }>(
        '/v1/keys',
        {
          schema: {
            permission: 'keys:write',
            tags: keyTags,
            summary: 'Create an event key; the response is the only time the key is shown',
            body: CreateKey,
            response: { 201: One(CreatedKey), ...errors(400, 401, 404) },
          },
        },
        async (request, reply) => {
          const { doc, key } = await deps.keys.create({ env: request.body.env })
          reply.code(201)
          return { data: { ...presentKey(doc), key } }
        },
      )
      app.delete<{ Params: { id: string } }>(
        '/v1/keys/:id',
        {
          schema: {
            permission: 'keys:write',
            tags: keyTags,
            summary: 'Revoke an event key',
            params: IdParams('Key ID'),
            response: { 200: One(Key), ...errors(401, 404) },
          },
        },
        async (request) => ({ data: presentKey(await deps.keys.revoke(request.params.id)) }),
      )

      const eventTags = ['Events']
      app.get<{ Params: { id: string } }>(
        '/v1/events/:id',
        {
          schema: {
            permission: 'events:read',
            tags: eventTags,
            summary: 'One stored event by internal ID (a duplicate carries duplicate_of)',
            params: IdParams('Internal ID'),
            response: { 200: One(StoredEvent), ...errors(401, 404) },
          },
        },
        async (request) => {
          const event = isUlid(request.params.id) ? await deps.events.getEvent(request.params.id) : null
          if (!event)
            throw new SluiceError('NOT_FOUND', `event "${request.params.id}" does not exist (or is not stored yet)`)
          return { data: presentEvent(event) }
        },
      )
      app.get<{ Querystring: Static<typeof EventsQuery> }>(
        '/v1/events',
        {
          schema: {
            permission: 'events:read',
            tags: eventTags,
            summary: 'Stored events, newest first',
            querystring: EventsQuery,
            response: { 200: Page(StoredEvent), ...errors(400, 401) },
          },
        },
        async (request) => {
          const q = request.query
          const limit = q.limit ?? 50
          const page = await deps.events.queryEvents({
            id: q.id,
            name: q.name,
            env: q.env,
            receivedAfter: queryTime('received_after', q.received_after),
            receivedBefore: queryTime('received_before', q.received_before),
            includeDuplicates: q.include_duplicates === true,
            limit,
            cursor: pageCursor(q.cursor),
          })
          return { data: page.events.map(presentEvent), metadata: { cursor: page.nextCursor, limit } }
        },
      )
      for (const extra of deps.extraRoutes ?? []) await extra(app)
    },
    async start() {},
    async stop() {},
  }
}
