// REST: the function registry. `GET /v1/functions?env=`: each function with its flow control and
// whether it is paused (POST /v1/functions/<key>/pause, api/function-actions.ts).
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { FlowControl } from '../core/flow.ts'
import type { ControlStore, FunctionDoc, PauseDoc } from '../control/types.ts'
import { EnvQuery, errors, FunctionSchema, List } from './schemas.ts'

export function functionsRoutes(deps: { list(env?: string): FunctionDoc[]; control: ControlStore }) {
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: Static<typeof EnvQuery> }>(
      '/v1/functions',
      {
        schema: {
          permission: 'functions:read',
          tags: ['Functions'],
          summary: 'Registered functions',
          querystring: EnvQuery,
          response: { 200: List(FunctionSchema), ...errors(400, 401) },
        },
      },
      async (request) => ({
        data: deps.list(request.query.env || undefined).map((f) => presentFunction(f, deps.control.get('pause', f.id))),
        metadata: {},
      }),
    )
  }
}

export function presentFunction(f: FunctionDoc, pause?: PauseDoc) {
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
    flow_control: f.flow ? presentFlow(f.flow) : null,
    paused: pause?.paused === true,
    paused_at: pause?.paused ? new Date(pause.pausedAt).toISOString() : null,
    registered_at: new Date(f.registeredAt).toISOString(),
  }
}

/** The flow control options in the API's case: snake_case keys, durations in milliseconds. */
function presentFlow(flow: FlowControl) {
  const { throttle, rateLimit, debounce, batchEvents } = flow
  return {
    ...(flow.concurrency && { concurrency: flow.concurrency }),
    ...(throttle && {
      throttle: { limit: throttle.limit, period_ms: throttle.periodMs, burst: throttle.burst, key: throttle.key },
    }),
    ...(rateLimit && { rate_limit: { limit: rateLimit.limit, period_ms: rateLimit.periodMs, key: rateLimit.key } }),
    ...(debounce && {
      debounce: { period_ms: debounce.periodMs, key: debounce.key, timeout_ms: debounce.timeoutMs },
    }),
    ...(batchEvents && {
      batch_events: {
        max_size: batchEvents.maxSize,
        timeout_ms: batchEvents.timeoutMs,
        key: batchEvents.key,
        if: batchEvents.if,
      },
    }),
    ...(flow.priority && { priority: flow.priority }),
    ...(flow.idempotency !== undefined && { idempotency: flow.idempotency }),
    ...(flow.singleton && { singleton: flow.singleton }),
  }
}
