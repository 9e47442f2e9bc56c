// REST: pausing and resuming a function. `POST /v1/functions/<key>/pause?env=` holds its new runs
// (durably, in its runner) until `POST /v1/functions/<key>/resume?env=` runs them in order, or, with
// `{"skip_held": true}`, ends them as skipped.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { SluiceError } from '../core/errors.ts'
import type { ControlStore, FunctionDoc, PauseDoc } from '../control/types.ts'
import { registrationId } from '../control/functions.ts'
import { errors } from './schemas.ts'
import { absentBodyIsEmpty } from './validation.ts'

const Params = Type.Object({ key: Type.String({ description: '<app id>-<function id>' }) })
const Query = Type.Object({ env: Type.Optional(Type.String({ description: 'Default: production' })) })
const ResumeBody = Type.Object(
  { skip_held: Type.Optional(Type.Boolean({ description: 'End the runs held while paused as skipped' })) },
  { additionalProperties: false },
)
const PauseState = Type.Object({
  data: Type.Object({
    id: Type.String(),
    env: Type.String(),
    paused: Type.Boolean(),
    paused_at: Type.String(),
    resumed_at: Type.Union([Type.String(), Type.Null()]),
    skip_held: Type.Boolean(),
  }),
})

export function functionActionsRoutes(deps: { control: ControlStore; list(env?: string): FunctionDoc[] }) {
  const find = (key: string, env = 'production') => {
    const fn = deps.list(env).find((f) => f.key === key)
    if (!fn) throw new SluiceError('NOT_FOUND', `function "${key}" is not registered in environment "${env}"`)
    return fn
  }
  const present = (doc: PauseDoc) => ({
    data: {
      id: doc.key,
      env: doc.env,
      paused: doc.paused,
      paused_at: new Date(doc.pausedAt).toISOString(),
      resumed_at: doc.resumedAt === undefined ? null : new Date(doc.resumedAt).toISOString(),
      skip_held: doc.skipHeld === true,
    },
  })
  return async (app: FastifyInstance) => {
    app.post<{ Params: Static<typeof Params>; Querystring: Static<typeof Query> }>(
      '/v1/functions/:key/pause',
      {
        schema: {
          permission: 'functions:write',
          tags: ['Functions'],
          summary: 'Pause a function: its new runs are held until it is resumed',
          params: Params,
          querystring: Query,
          response: { 200: PauseState, ...errors(401, 404) },
        },
      },
      async (request) => {
        const fn = find(request.params.key, request.query.env || undefined)
        const id = registrationId(fn.env, fn.key)
        const current = deps.control.get('pause', id)
        if (current?.paused) return present(current)
        const doc = { id, env: fn.env, key: fn.key, paused: true, pausedAt: Date.now() }
        await deps.control.put('pause', id, doc)
        return present(doc)
      },
    )
    app.post<{ Params: Static<typeof Params>; Querystring: Static<typeof Query>; Body: Static<typeof ResumeBody> }>(
      '/v1/functions/:key/resume',
      {
        schema: {
          permission: 'functions:write',
          tags: ['Functions'],
          summary: 'Resume a paused function: its held runs run in order (or end as skipped)',
          params: Params,
          querystring: Query,
          body: ResumeBody,
          response: { 200: PauseState, ...errors(400, 401, 404, 409) },
        },
        preValidation: absentBodyIsEmpty,
      },
      async (request) => {
        const fn = find(request.params.key, request.query.env || undefined)
        const id = registrationId(fn.env, fn.key)
        const current = deps.control.get('pause', id)
        if (!current?.paused) throw new SluiceError('FUNCTION_NOT_PAUSED', `function "${fn.key}" is not paused`)
        const doc = { ...current, paused: false, resumedAt: Date.now(), skipHeld: request.body?.skip_held === true }
        await deps.control.put('pause', id, doc)
        return present(doc)
      },
    )
  }
}
