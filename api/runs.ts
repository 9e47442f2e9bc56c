// REST: function runs. `GET /v1/runs?function=&status=&env=&event_name=&queued_after=&queued_before=&cursor=`,
// `GET /v1/runs/<run id>`, `GET /v1/events/<internal id>/runs`.
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { SluiceError } from '../core/errors.ts'
import { isUlid } from '../core/ids.ts'
import type { RunDoc, RunStore, StepDoc } from '../store/runs-types.ts'
import type { CancelCause, PauseDoc, RunError } from '../core/run-doc.ts'
import { pageCursor, queryTime } from './query.ts'
import { findRuns } from './bulk-filter.ts'
import { errors, IdParams, List, One, Page, Run, RunsQuery } from './schemas.ts'

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())
const tags = ['Runs']

export function runsRoutes(deps: { runs: RunStore }) {
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: Static<typeof RunsQuery> }>(
      '/v1/runs',
      {
        schema: {
          permission: 'runs:read',
          tags,
          summary: 'Function runs, newest first',
          querystring: RunsQuery,
          response: { 200: Page(Run), ...errors(400, 401) },
        },
      },
      async (request) => {
        const q = request.query
        const limit = q.limit ?? 50
        const query = {
          functionId: q.function || undefined,
          status: q.status,
          eventId: q.event || undefined,
          env: q.env || undefined,
          limit,
          cursor: pageCursor(q.cursor),
        }
        const filter = {
          eventName: q.event_name || undefined,
          queuedAfter: queryTime('queued_after', q.queued_after),
          queuedBefore: queryTime('queued_before', q.queued_before),
        }
        const page = Object.values(filter).some((v) => v !== undefined)
          ? await findRuns(deps.runs, query, filter)
          : await deps.runs.queryRuns(query)
        return { data: page.runs.map(presentRun), metadata: { cursor: page.nextCursor, limit } }
      },
    )
    app.get<{ Params: { id: string } }>(
      '/v1/runs/:id',
      {
        schema: {
          permission: 'runs:read',
          tags,
          summary: 'One run with its steps',
          params: IdParams('Run ID'),
          response: { 200: One(Run), ...errors(401, 404) },
        },
      },
      async (request) => {
        const run = isUlid(request.params.id) ? await deps.runs.getRun(request.params.id) : null
        if (!run) throw new SluiceError('NOT_FOUND', `run "${request.params.id}" does not exist (or is not stored yet)`)
        return { data: presentRun(run) }
      },
    )
    app.get<{ Params: { id: string } }>(
      '/v1/events/:id/runs',
      {
        schema: {
          permission: 'events:read',
          tags,
          summary: 'Function runs of an event',
          params: IdParams('Internal ID of the event'),
          response: { 200: List(Run), ...errors(401, 404) },
        },
      },
      async (request) => {
        if (!isUlid(request.params.id))
          throw new SluiceError('NOT_FOUND', `event "${request.params.id}" does not exist`)
        const page = await deps.runs.queryRuns({ eventId: request.params.id, limit: 1000 })
        return { data: page.runs.map(presentRun), metadata: {} }
      },
    )
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
    error: r.error ? presentError(r.error) : null,
    next_attempt_at: iso(r.nextAttemptAt),
    waiting_for: presentPause(r.steps.find((s) => s.status === 'waiting')?.pause),
    cancelled_by: r.error?.cancelledBy ? snakeCause(r.error.cancelledBy) : null,
    event_ids: r.eventIds ?? [r.eventId],
    queued_at: iso(r.queuedAt),
    started_at: iso(r.startedAt),
    ended_at: iso(r.endedAt),
  }
}

function presentStep(s: StepDoc) {
  return {
    id: s.id,
    name: s.name ?? s.id,
    status: s.status,
    output: s.output ?? null,
    error: s.error ? presentError(s.error) : null,
    attempts: s.attempts,
    ended_at: iso(s.endedAt),
    pause: presentPause(s.pause),
  }
}

function presentError({ cancelledBy: _, ...error }: RunError) {
  return error
}

function snakeCause(cause: CancelCause) {
  if (cause.kind === 'event') return { kind: cause.kind, event_id: cause.eventId, event_name: cause.eventName }
  return cause.kind === 'singleton' ? { kind: cause.kind, run_id: cause.runId } : cause
}

function presentPause(p: PauseDoc | undefined) {
  if (!p) return null
  return {
    kind: p.kind,
    started_at: iso(p.startedAt),
    until: iso(p.until),
    ...(p.event !== undefined && { event: p.event }),
    ...(p.match !== undefined && { match: p.match }),
    ...(p.if !== undefined && { if: p.if }),
    ...(p.function !== undefined && { function: p.function }),
    ...(p.runId !== undefined && { run_id: p.runId }),
    ...(p.matchedEventId !== undefined && { matched_event_id: p.matchedEventId }),
    ...(p.timedOut !== undefined && { timed_out: p.timedOut }),
  }
}
