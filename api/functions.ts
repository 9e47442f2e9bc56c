// REST: the function registry. `GET /v1/functions?env=`.
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { FunctionDoc } from '../control/types.ts'
import { EnvQuery, errors, FunctionSchema, List } from './schemas.ts'

export function functionsRoutes(deps: { list(env?: string): FunctionDoc[] }) {
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: Static<typeof EnvQuery> }>(
      '/v1/functions',
      {
        schema: {
          tags: ['Functions'],
          summary: 'Registered functions',
          querystring: EnvQuery,
          response: { 200: List(FunctionSchema), ...errors(400, 401) },
        },
      },
      async (request) => ({ data: deps.list(request.query.env || undefined).map(presentFunction), metadata: {} }),
    )
  }
}

export function presentFunction(f: FunctionDoc) {
  return {
    id: f.key,
    env: f.env,
    app_id: f.appId,
    function_id: f.functionId,
    name: f.name,
    triggers: f.triggers,
    cancel_on: (f.cancelOn ?? []).map(({ timeoutMs, ...rule }) => ({ ...rule, timeout_ms: timeoutMs ?? null })),
    retries: f.retries,
    timeout_ms: f.timeoutMs ?? null,
    registered_at: new Date(f.registeredAt).toISOString(),
  }
}
