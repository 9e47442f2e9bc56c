// `/v1/schemas`: a JSON Schema for `data` per event name and environment, versioned (docs/schemas.md).
// The name is one URL-encoded path segment (`shop%2Forder.placed`); `?env=` defaults to production.
import { type Static, Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Schemas } from '../control/schemas.ts'
import type { SchemaDoc, SchemaVersion } from '../control/types.ts'
import { SluiceError } from '../core/errors.ts'
import { errors, List, One, Time } from './schemas.ts'
import { PRODUCTION } from '../core/env-names.ts'

const JsonSchema = Type.Record(Type.String(), Type.Unknown(), {
  description: "A JSON Schema (draft 2020-12) for the event's data",
  examples: [{ type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] }],
})
export const SchemaName = Type.Object({ name: Type.String({ description: 'Event name, URL-encoded' }) })
export const SchemaEnv = Type.Object({
  env: Type.Optional(Type.String({ description: 'A standard environment, or "branch" for the branch group' })),
})
const PushBody = Type.Object({ schema: JsonSchema }, { additionalProperties: false })
const StoredSchema = Type.Object({
  name: Type.String(),
  env: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  schema: JsonSchema,
  created_at: Time('When this version was pushed'),
})
const SchemaWithVersions = Type.Object({
  ...StoredSchema.properties,
  versions: Type.Array(Type.Object({ version: Type.Integer(), schema: JsonSchema, created_at: Time('When pushed') }), {
    description: 'Every version, oldest first',
  }),
})
const ListedSchema = Type.Object({
  name: Type.String(),
  env: Type.String(),
  version: Type.Integer({ description: 'The latest version' }),
  created_at: Time('When the latest version was pushed'),
})

const iso = (ms: number) => new Date(ms).toISOString()
const presentVersion = (doc: SchemaDoc, v: SchemaVersion) => ({
  name: doc.name,
  env: doc.env,
  version: v.version,
  schema: v.schema,
  created_at: iso(v.createdAt),
})
const latestOf = (doc: SchemaDoc) => doc.versions[doc.versions.length - 1]

export function eventSchemaRoutes(deps: { schemas: Schemas }) {
  return async (app: FastifyInstance) => {
    const tags = ['Schemas']
    app.put<{
      Params: Static<typeof SchemaName>
      Querystring: Static<typeof SchemaEnv>
      Body: Static<typeof PushBody>
    }>(
      '/v1/schemas/:name',
      {
        schema: {
          permission: 'schemas:write',
          tags,
          summary: "Push a new version of an event name's schema (checked against the latest)",
          params: SchemaName,
          querystring: SchemaEnv,
          body: PushBody,
          response: { 200: One(StoredSchema), ...errors(400, 401, 404, 409) },
        },
      },
      async (request) => {
        const env = request.query.env ?? PRODUCTION
        const { doc, version } = await deps.schemas.push(env, request.params.name, request.body.schema)
        return { data: presentVersion(doc, version) }
      },
    )
    app.get<{ Params: Static<typeof SchemaName>; Querystring: Static<typeof SchemaEnv> }>(
      '/v1/schemas/:name',
      {
        schema: {
          permission: 'schemas:read',
          tags,
          summary: "An event name's latest schema, with its versions",
          params: SchemaName,
          querystring: SchemaEnv,
          response: { 200: One(SchemaWithVersions), ...errors(401, 404) },
        },
      },
      async (request) => {
        const env = request.query.env ?? PRODUCTION
        const doc = deps.schemas.get(env, request.params.name)
        if (!doc)
          throw new SluiceError('NOT_FOUND', `schema: none for "${request.params.name}" in environment "${env}"`)
        const versions = doc.versions.map((v) => ({
          version: v.version,
          schema: v.schema,
          created_at: iso(v.createdAt),
        }))
        return { data: { ...presentVersion(doc, latestOf(doc)), versions } }
      },
    )
    app.get<{ Querystring: Static<typeof SchemaEnv> }>(
      '/v1/schemas',
      {
        schema: {
          permission: 'schemas:read',
          tags,
          summary: 'Event schemas, latest versions (all environments unless ?env=)',
          querystring: SchemaEnv,
          response: { 200: List(ListedSchema), ...errors(401) },
        },
      },
      async (request) => ({
        data: deps.schemas.list(request.query.env).map((doc) => {
          const latest = latestOf(doc)
          return { name: doc.name, env: doc.env, version: latest.version, created_at: iso(latest.createdAt) }
        }),
        metadata: {},
      }),
    )
  }
}
