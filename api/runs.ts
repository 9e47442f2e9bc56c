// REST: function runs. `GET /v1/runs?function=&status=&env=&limit=&cursor=`, `GET /v1/runs/<run id>`,
// `GET /v1/events/<internal id>/runs`.
import type { FastifyInstance } from 'fastify'
import { SluiceError } from '../core/errors.ts'
import { isUlid } from '../core/ids.ts'
import { RUN_STATUSES, type RunDoc, type RunStatus, type RunStore, type StepDoc } from '../store/runs-types.ts'
import { queryInt, queryString } from './query.ts'

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())

export function runsRoutes(deps: { runs: RunStore }) {
  return async (app: FastifyInstance) => {
    app.get('/v1/runs', async (request) => {
      const q = request.query as Record<string, unknown>
      const status = queryString(q, 'status')
      if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus)) throw new SluiceError('REQUEST_INVALID', `status: must be one of ${RUN_STATUSES.join(', ')}`)
      const limit = queryInt(q, 'limit', { min: 1, max: 1000 }) ?? 50
      const cursor = queryString(q, 'cursor')
      if (cursor !== undefined && !isUlid(cursor)) throw new SluiceError('REQUEST_INVALID', 'cursor: not a cursor returned by this API')
      const page = await deps.runs.queryRuns({
        functionId: queryString(q, 'function'),
        status: status as RunStatus | undefined,
        eventId: queryString(q, 'event'),
        env: queryString(q, 'env'),
        limit,
        cursor,
      })
      return { data: page.runs.map(presentRun), metadata: { cursor: page.nextCursor, limit } }
    })
    app.get<{ Params: { id: string } }>('/v1/runs/:id', async (request) => {
      const run = isUlid(request.params.id) ? await deps.runs.getRun(request.params.id) : null
      if (!run) throw new SluiceError('NOT_FOUND', `run "${request.params.id}" does not exist (or is not stored yet)`)
      return { data: presentRun(run) }
    })
    app.get<{ Params: { id: string } }>('/v1/events/:id/runs', async (request) => {
      if (!isUlid(request.params.id)) throw new SluiceError('NOT_FOUND', `event "${request.params.id}" does not exist`)
      const page = await deps.runs.queryRuns({ eventId: request.params.id, limit: 1000 })
      return { data: page.runs.map(presentRun), metadata: {} }
    })
  }
}

export function presentRun(r: RunDoc) {
  return {
    run_id: r.runId,
    function_id: r.functionId,
    env: r.env,
    event_id: r.eventId,
    event_name: r.eventName,
    status: r.status,
    attempts: r.attempts,
    steps: r.steps.map(presentStep),
    output: r.output ?? null,
    error: r.error ?? null,
    next_attempt_at: iso(r.nextAttemptAt),
    queued_at: iso(r.queuedAt),
    started_at: iso(r.startedAt),
    ended_at: iso(r.endedAt),
  }
}

function presentStep(s: StepDoc) {
  return { id: s.id, status: s.status, output: s.output ?? null, error: s.error ?? null, attempts: s.attempts, ended_at: iso(s.endedAt) }
}
