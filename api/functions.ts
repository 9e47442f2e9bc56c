// REST: the function registry. `GET /v1/functions?env=`.
import type { FastifyInstance } from 'fastify'
import type { FunctionDoc } from '../control/types.ts'
import { queryString } from './query.ts'

export function functionsRoutes(deps: { list(env?: string): FunctionDoc[] }) {
  return async (app: FastifyInstance) => {
    app.get('/v1/functions', async (request) => {
      const env = queryString(request.query as Record<string, unknown>, 'env')
      return { data: deps.list(env).map(presentFunction), metadata: {} }
    })
  }
}

export function presentFunction(f: FunctionDoc) {
  return {
    id: f.key,
    env: f.env,
    app_id: f.appId,
    function_id: f.functionId,
    name: f.name,
    trigger: { event: f.trigger.event },
    retries: f.retries,
    timeout_ms: f.timeoutMs ?? null,
    registered_at: new Date(f.registeredAt).toISOString(),
  }
}
