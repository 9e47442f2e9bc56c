// `POST /v1/runs/<run id>/retry`: a failed run continues from its completed steps (core/run-retry.ts).
// `POST /v1/runs/<run id>/cancel`: a run that has not ended (queued, running, waiting, retrying) ends
// as cancelled (core/run-cancel.ts).
import type { FastifyInstance } from 'fastify'
import { errors } from './schemas.ts'
import { Type, type Static } from '@sinclair/typebox'
import type { Output } from '../bus/output.ts'
import { SluiceError } from '../core/errors.ts'
import { isUlid } from '../core/ids.ts'
import type { FunctionRecord } from '../core/run-record.ts'
import type { EventRecord } from '../core/event.ts'
import { retryOfFailedRun } from '../core/run-retry.ts'
import { runEvents } from './run-events.ts'
import { cancelSignal, isCancellable } from '../core/run-cancel.ts'
import type { RunDoc, RunStore } from '../store/runs-types.ts'
import type { EventStore } from '../store/types.ts'
import { presentRun } from './runs.ts'

const Params = Type.Object({ id: Type.String({ description: 'A run ID' }) })
type Params = Static<typeof Params>
/** The run as GET /v1/runs/<id> shows it (its other fields pass through). */
const RunEnvelope = Type.Object({
  data: Type.Object(
    { run_id: Type.String(), status: Type.String(), attempts: Type.Integer() },
    { additionalProperties: true },
  ),
})
const CancelRequested = Type.Object({ data: Type.Object({ run_id: Type.String(), cancel_requested: Type.Boolean() }) })

export interface RunActionsDeps {
  runs: RunStore
  events: EventStore
  /** The function's own topic, where its runner reads the run's records. */
  functionRuns(fn: { env: string; key: string }): Output<FunctionRecord>
  snapshots: Output<RunDoc>
  /** The key a run's records travel under (its function's flow control), undefined when by run ID. */
  routeKeyOf(run: RunDoc, event: EventRecord): string | undefined
}

export function runActionsRoutes(deps: RunActionsDeps) {
  return async (app: FastifyInstance) => {
    app.post<{ Params: Params }>(
      '/v1/runs/:id/cancel',
      {
        schema: {
          permission: 'runs:write',
          params: Params,
          response: { 202: CancelRequested, ...errors(401, 404, 409) },
        },
      },
      async (request, reply) => {
        const { id } = request.params
        const run = isUlid(id) ? await deps.runs.getRun(id) : null
        if (!run) throw new SluiceError('NOT_FOUND', `run "${id}" does not exist (or is not stored yet)`)
        if (!isCancellable(run))
          throw new SluiceError('RUN_NOT_CANCELLABLE', `run "${run.runId}" is ${run.status}: it has ended already`)
        const stored = await deps.events.getEvent(run.eventId)
        const routeKey = stored ? deps.routeKeyOf(run, stored) : undefined
        await deps
          .functionRuns({ env: run.env, key: run.functionId })
          .publish([
            { ...cancelSignal(run.runId, { kind: 'api' }, Date.now()), ...(routeKey !== undefined && { routeKey }) },
          ])
        reply.code(202)
        // The step in flight, if any, finishes first; the run's status tells when it has ended.
        return { data: { run_id: run.runId, cancel_requested: true } }
      },
    )
    app.post<{ Params: Params }>(
      '/v1/runs/:id/retry',
      {
        schema: { permission: 'runs:write', params: Params, response: { 202: RunEnvelope, ...errors(401, 404, 409) } },
      },
      async (request, reply) => {
        const { id } = request.params
        const run = isUlid(id) ? await deps.runs.getRun(id) : null
        if (!run) throw new SluiceError('NOT_FOUND', `run "${id}" does not exist (or is not stored yet)`)
        if (run.status !== 'failed')
          throw new SluiceError('RUN_NOT_RETRIABLE', `run "${id}" is ${run.status}: only a failed run can be retried`)
        const started = await runEvents(deps.events, run)
        if (!started)
          throw new SluiceError(
            'NOT_FOUND',
            `event "${run.eventId}" of run "${id}" is not stored: the run cannot be retried`,
          )
        const { event, events } = started
        const { record, snapshot } = retryOfFailedRun(run, event, events)
        const routeKey = deps.routeKeyOf(run, event)
        if (routeKey !== undefined) record.routeKey = routeKey
        // The record first: once it is durable the retry happens, whatever becomes of the snapshot.
        await deps.functionRuns({ env: run.env, key: run.functionId }).publish([record])
        await deps.snapshots.publish([snapshot])
        reply.code(202)
        return { data: presentRun(snapshot) }
      },
    )
  }
}
