// The REST API (`/v1`, Bearer signing key, open in dev): snake_case JSON in {data, metadata}.
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { SluiceError } from '../core/errors.ts'
import { isUlid } from '../core/ids.ts'
import type { Envs } from '../control/envs.ts'
import type { Keys } from '../control/keys.ts'
import type { EventStore } from '../store/types.ts'
import { signingKeyGuard } from './auth.ts'
import { presentEnv, presentEvent, presentKey } from './present.ts'
import { queryInt, queryString } from './query.ts'

export interface ApiDeps { keys: Keys; envs: Envs; events: EventStore; log: Logger; extraRoutes?: Array<(app: FastifyInstance) => Promise<void>> }
export interface ApiConfig { devMode: boolean; signingKey?: string }

type Q = Record<string, unknown>

export function createApi(deps: ApiDeps, config: ApiConfig) {
  return {
    routes: async (app: FastifyInstance) => {
      app.addHook('onRequest', signingKeyGuard(config.devMode, config.signingKey))
      const body = (request: { body: unknown }): Q => (request.body && typeof request.body === 'object' ? (request.body as Q) : {})

      app.get('/v1/envs', async () => ({ data: deps.envs.list().map(presentEnv), metadata: {} }))
      app.post('/v1/envs', async (request, reply) => {
        const b = body(request)
        reply.code(201)
        return { data: presentEnv(await deps.envs.create({ name: b.name, branch: b.branch, maxBodyBytes: b.max_body_bytes, maxEventsPerSecond: b.max_events_per_second })) }
      })
      app.patch<{ Params: { name: string } }>('/v1/envs/:name', async (request) => {
        const b = body(request)
        return { data: presentEnv(await deps.envs.update(request.params.name, { maxBodyBytes: b.max_body_bytes, maxEventsPerSecond: b.max_events_per_second })) }
      })
      app.post<{ Params: { name: string } }>('/v1/envs/:name/archive', async (request) => ({ data: presentEnv(await deps.envs.archive(request.params.name)) }))

      app.get('/v1/keys', async () => ({ data: deps.keys.list().map(presentKey), metadata: {} }))
      app.post('/v1/keys', async (request, reply) => {
        const { doc, key } = await deps.keys.create({ env: body(request).env })
        reply.code(201)
        return { data: { ...presentKey(doc), key } }
      })
      app.delete<{ Params: { id: string } }>('/v1/keys/:id', async (request) => ({ data: presentKey(await deps.keys.revoke(request.params.id)) }))

      app.get<{ Params: { id: string } }>('/v1/events/:id', async (request) => {
        const event = isUlid(request.params.id) ? await deps.events.getEvent(request.params.id) : null
        if (!event) throw new SluiceError('NOT_FOUND', `event "${request.params.id}" does not exist (or is not stored yet)`)
        return { data: presentEvent(event) }
      })
      app.get('/v1/events', async (request) => {
        const q = request.query as Q
        const limit = queryInt(q, 'limit', { min: 1, max: 1000 }) ?? 50
        const cursor = queryString(q, 'cursor')
        if (cursor !== undefined && !isUlid(cursor)) throw new SluiceError('REQUEST_INVALID', 'cursor: not a cursor returned by this API')
        const page = await deps.events.queryEvents({
          id: queryString(q, 'id'),
          name: queryString(q, 'name'),
          env: queryString(q, 'env'),
          receivedAfter: queryInt(q, 'received_after', { min: 0 }),
          receivedBefore: queryInt(q, 'received_before', { min: 0 }),
          includeDuplicates: queryString(q, 'include_duplicates') === 'true',
          limit,
          cursor,
        })
        return { data: page.events.map(presentEvent), metadata: { cursor: page.nextCursor, limit } }
      })
      for (const extra of deps.extraRoutes ?? []) await extra(app)
    },
    async start() {},
    async stop() {},
  }
}
