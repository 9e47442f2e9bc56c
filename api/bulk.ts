// REST: bulk cancel and replay of runs by filter. `POST /v1/runs/bulk/dry-run` answers how many runs
// the action would touch; `POST /v1/runs/bulk`, 202 and a job the api role works through in the
// background (api/bulk-worker.ts); `GET /v1/runs/bulk/<job id>` and `GET /v1/runs/bulk` show progress.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { SluiceError } from '../core/errors.ts'
import { newUlid } from '../core/ids.ts'
import { RUN_STATUSES } from '../core/run-doc.ts'
import type { BulkJobDoc, ControlStore, RunFilter } from '../control/types.ts'
import type { RunStore } from '../store/runs-types.ts'
import { page } from './bulk-filter.ts'
import { errors, Literals, Nullable, Time } from './schemas.ts'
import { queryTime } from './query.ts'

const Filter = Type.Object(
  {
    function: Type.Optional(Type.String({ description: '<app id>-<function id>' })),
    env: Type.Optional(Type.String()),
    status: Type.Optional(Literals(RUN_STATUSES)),
    event_name: Type.Optional(Type.String()),
    queued_after: Type.Optional(Type.Union([Type.Integer(), Type.String()], { description: 'ms or ISO 8601' })),
    queued_before: Type.Optional(Type.Union([Type.Integer(), Type.String()], { description: 'ms or ISO 8601' })),
  },
  { additionalProperties: false },
)
const BulkBody = Type.Object(
  {
    action: Literals(['cancel', 'replay'] as const),
    filter: Filter,
    /** Replay: `new` runs of the same events (default), or `retry` of failed runs from their last step. */
    mode: Type.Optional(Literals(['new', 'retry'] as const)),
  },
  { additionalProperties: false },
)
const JobFilter = Type.Object(
  {
    function: Type.Optional(Type.String()),
    env: Type.Optional(Type.String()),
    status: Type.Optional(Type.String()),
    event_name: Type.Optional(Type.String()),
    queued_after: Type.Optional(Time('Queued after')),
    queued_before: Type.Optional(Time('Queued before')),
  },
  { description: 'The runs it acts on' },
)
const Job = Type.Object({
  id: Type.String(),
  action: Type.String(),
  mode: Nullable(Type.String()),
  filter: JobFilter,
  status: Literals(['running', 'done', 'failed'] as const),
  scanned: Type.Integer(),
  matched: Type.Integer(),
  done: Type.Integer(),
  skipped: Type.Integer(),
  created_at: Time('Creation time'),
  updated_at: Time('Last progress'),
})
const DryRun = Type.Object({
  data: Type.Object({
    matched: Type.Integer(),
    scanned: Type.Integer(),
    /** False when the count stopped at the scan bound: at least `matched` runs match. */
    complete: Type.Boolean(),
  }),
})

/** Runs a dry run reads at most: past it, it answers "at least". */
const DRY_RUN_SCAN_LIMIT = 100_000

export function bulkRoutes(deps: { control: ControlStore; runs: RunStore }) {
  const present = (job: BulkJobDoc) => ({
    id: job.id,
    action: job.action,
    mode: job.mode ?? null,
    filter: presentFilter(job.filter),
    status: job.status,
    scanned: job.scanned,
    matched: job.matched,
    done: job.done,
    skipped: job.skipped,
    created_at: new Date(job.createdAt).toISOString(),
    updated_at: new Date(job.updatedAt).toISOString(),
  })
  return async (app: FastifyInstance) => {
    /** The action's filter, checked (a mode only for a replay). */
    const filterOf = (body: Static<typeof BulkBody>) => {
      if (body.mode !== undefined && body.action !== 'replay')
        throw new SluiceError('REQUEST_INVALID', 'body.mode: only a replay has a mode')
      return toFilter(body.filter)
    }
    app.post<{ Body: Static<typeof BulkBody> }>(
      '/v1/runs/bulk/dry-run',
      {
        schema: {
          permission: 'runs:read',
          tags: ['Runs'],
          summary: 'How many runs a bulk cancel or replay would act on (it changes nothing)',
          body: BulkBody,
          response: { 200: DryRun, ...errors(400, 401) },
        },
      },
      async (request) => {
        const filter = filterOf(request.body)
        let scanned = 0
        let matched = 0
        let cursor: string | null = null
        do {
          const result = await page(deps.runs, filter, cursor, 1000)
          scanned += result.scanned
          matched += result.matched.length
          cursor = result.next
        } while (cursor !== null && scanned < DRY_RUN_SCAN_LIMIT)
        return { data: { matched, scanned, complete: cursor === null } }
      },
    )
    app.post<{ Body: Static<typeof BulkBody> }>(
      '/v1/runs/bulk',
      {
        schema: {
          permission: 'runs:write',
          tags: ['Runs'],
          summary: 'Cancel or replay the runs a filter matches, as a background job',
          body: BulkBody,
          response: { 202: Type.Object({ data: Job }), ...errors(400, 401) },
        },
      },
      async (request, reply) => {
        const body = request.body
        const filter = filterOf(body)
        const now = Date.now()
        const job: BulkJobDoc = {
          id: `job_${newUlid()}`,
          action: body.action,
          ...(body.action === 'replay' && { mode: body.mode ?? 'new' }),
          filter,
          status: 'running',
          scanned: 0,
          matched: 0,
          done: 0,
          skipped: 0,
          cursor: null,
          createdAt: now,
          updatedAt: now,
        }
        await deps.control.put('job', job.id, job)
        reply.code(202)
        return { data: present(job) }
      },
    )
    app.get(
      '/v1/runs/bulk',
      {
        schema: {
          permission: 'runs:read',
          tags: ['Runs'],
          summary: 'Bulk actions, newest first',
          response: { 200: Type.Object({ data: Type.Array(Job) }), ...errors(401) },
        },
      },
      async () => ({
        data: deps.control
          .list('job')
          .sort((a, b) => b.createdAt - a.createdAt)
          .map(present),
      }),
    )
    app.get<{ Params: { id: string } }>(
      '/v1/runs/bulk/:id',
      {
        schema: {
          permission: 'runs:read',
          tags: ['Runs'],
          summary: "A bulk action's progress",
          params: Type.Object({ id: Type.String() }),
          response: { 200: Type.Object({ data: Job }), ...errors(401, 404) },
        },
      },
      async (request) => {
        const job = deps.control.get('job', request.params.id)
        if (!job) throw new SluiceError('NOT_FOUND', `bulk action "${request.params.id}" does not exist`)
        return { data: present(job) }
      },
    )
  }
}

function toFilter(given: Static<typeof Filter>): RunFilter {
  const time = (value: number | string | undefined, field: string) =>
    value === undefined ? undefined : queryTime(field, String(value), 'body.filter')
  const after = time(given.queued_after, 'queued_after')
  const before = time(given.queued_before, 'queued_before')
  return {
    ...(given.function !== undefined && { function: given.function }),
    ...(given.env !== undefined && { env: given.env }),
    ...(given.status !== undefined && { status: given.status }),
    ...(given.event_name !== undefined && { eventName: given.event_name }),
    ...(after !== undefined && { queuedAfter: after }),
    ...(before !== undefined && { queuedBefore: before }),
  }
}

function presentFilter(filter: RunFilter) {
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString())
  return {
    function: filter.function,
    env: filter.env,
    status: filter.status,
    event_name: filter.eventName,
    queued_after: iso(filter.queuedAfter),
    queued_before: iso(filter.queuedBefore),
  }
}
