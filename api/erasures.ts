// REST: erasure of one person's data (docs/privacy.md). `POST /v1/erasures {env, path, value}`
// → 202 and a job the api role works through in the background (api/erasure-worker.ts);
// `GET /v1/erasures/<id>` and `GET /v1/erasures` show its status and counts. The value is never
// shown back: a job reads it as its fingerprint.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { SluiceError } from '../core/errors.ts'
import { fingerprint } from '../core/fingerprint.ts'
import { newUlid } from '../core/ids.ts'
import type { Envs } from '../control/envs.ts'
import type { ControlStore, ErasureDoc } from '../control/types.ts'
import { errors, Literals, Time } from './schemas.ts'

/** `data.` and one or more field names, each without a dot. */
const PATH = /^data(\.[^.]+)+$/

const ErasureBody = Type.Object(
  {
    env: Type.String({ description: 'The environment whose events are erased', examples: ['production'] }),
    path: Type.String({
      description: 'Where in `data` the value is: `data.` and field names, dot-separated',
      examples: ['data.user.id'],
    }),
    value: Type.Union([Type.String(), Type.Number(), Type.Boolean()], {
      description: 'The value it holds there (compared exactly: "42" is not 42)',
      examples: ['user-123'],
    }),
  },
  { additionalProperties: false, examples: [{ env: 'production', path: 'data.user.id', value: 'user-123' }] },
)
const Counts = Type.Object({
  events: Type.Integer({ description: 'Events deleted (duplicates included)' }),
  runs: Type.Integer({ description: 'Runs they triggered, with their step outputs' }),
  requests: Type.Integer({ description: 'Raw webhook requests they came from' }),
})
const Erasure = Type.Object({
  id: Type.String(),
  env: Type.String(),
  path: Type.String(),
  value_fingerprint: Type.String({ description: 'The first 8 hex digits of the sha256 of the value as JSON' }),
  status: Literals(['running', 'done', 'failed'] as const),
  counts: Counts,
  error: Type.Union([Type.String(), Type.Null()]),
  created_at: Time('Creation time'),
  updated_at: Time('Last progress'),
})

const present = (job: ErasureDoc) => ({
  id: job.id,
  env: job.env,
  path: job.path,
  value_fingerprint: job.valueFingerprint,
  status: job.status,
  counts: job.counts,
  error: job.error ?? null,
  created_at: new Date(job.createdAt).toISOString(),
  updated_at: new Date(job.updatedAt).toISOString(),
})

export function erasureRoutes(deps: { control: ControlStore; envs: Envs }) {
  const tags = ['Erasure']
  return async (app: FastifyInstance) => {
    app.post<{ Body: Static<typeof ErasureBody> }>(
      '/v1/erasures',
      {
        schema: {
          permission: 'erasures:admin',
          tags,
          summary: "Erase one person's events, their runs and raw webhook requests, as a background job",
          body: ErasureBody,
          response: { 202: Type.Object({ data: Erasure }), ...errors(400, 401) },
        },
      },
      async (request, reply) => {
        const { env, path, value } = request.body
        if (!deps.envs.get(env))
          throw new SluiceError('REQUEST_INVALID', `body.env: environment "${env}" does not exist`)
        if (!PATH.test(path))
          throw new SluiceError(
            'REQUEST_INVALID',
            'body.path: must be "data." and dot-separated field names (data.user.id)',
          )
        if (typeof value === 'number' && !Number.isFinite(value))
          throw new SluiceError('REQUEST_INVALID', 'body.value: must be a finite number')
        const now = Date.now()
        const job: ErasureDoc = {
          id: `erasure_${newUlid()}`,
          env,
          path,
          value,
          valueFingerprint: fingerprint(JSON.stringify(value)),
          status: 'running',
          counts: { events: 0, runs: 0, requests: 0 },
          cursor: null,
          scanned: false,
          failures: 0,
          createdAt: now,
          updatedAt: now,
        }
        await deps.control.put('erasure', job.id, job)
        reply.code(202)
        return { data: present(job) }
      },
    )
    app.get(
      '/v1/erasures',
      {
        schema: {
          permission: 'erasures:admin',
          tags,
          summary: 'Erasures, newest first',
          response: { 200: Type.Object({ data: Type.Array(Erasure) }), ...errors(401) },
        },
      },
      async () => ({
        data: deps.control
          .list('erasure')
          .sort((a, b) => b.createdAt - a.createdAt)
          .map(present),
      }),
    )
    app.get<{ Params: { id: string } }>(
      '/v1/erasures/:id',
      {
        schema: {
          permission: 'erasures:admin',
          tags,
          summary: "An erasure's status and counts",
          params: Type.Object({ id: Type.String() }),
          response: { 200: Type.Object({ data: Erasure }), ...errors(401, 404) },
        },
      },
      async (request) => {
        const job = deps.control.get('erasure', request.params.id)
        if (!job) throw new SluiceError('NOT_FOUND', `erasure "${request.params.id}" does not exist`)
        return { data: present(job) }
      },
    )
  }
}
