// `/v1/schemas/<name>/draft` and `/violations`: a name's schema as its stored events show it
// (docs/schemas.md, "Drafting from traffic", "Violations"). The draft saves nothing: the user
// pushes it with PUT /v1/schemas/<name>, which still checks compatibility.
import { type Static, Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { draftSchema } from '../control/schema-draft.ts'
import { diffSchemas } from '../control/schema-diff.ts'
import type { Schemas } from '../control/schemas.ts'
import type { StoredEvent } from '../core/event.ts'
import { SluiceError } from '../core/errors.ts'
import type { InsightsStore } from '../store/insights-types.ts'
import type { EventStore } from '../store/types.ts'
import { queryTime } from './query.ts'
import { errors, Nullable, One } from './schemas.ts'
import { SchemaEnv, SchemaName } from './event-schemas.ts'
import { absentBodyIsEmpty } from './validation.ts'
import { PRODUCTION } from '../core/env-names.ts'

const DAY = 24 * 60 * 60_000
const HOUR = 60 * 60_000
export const MAX_VIOLATION_BUCKETS = 500
const SAMPLES = 20
const DRAFT_PAGE = 500

const JsonSchema = Type.Record(Type.String(), Type.Unknown(), { description: 'A JSON Schema (draft 2020-12)' })
const TimeField = (description: string) =>
  Type.Union([Type.Integer({ minimum: 0 }), Type.String()], { description: `${description}: ms or ISO 8601` })
const DraftBody = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Events read, newest first' })),
    since: Type.Optional(TimeField('Only events received after it')),
  },
  { additionalProperties: false, examples: [{ limit: 1000, since: '2026-11-01T00:00:00Z' }] },
)
const Change = Type.Object({
  op: Type.Union([Type.Literal('add'), Type.Literal('remove'), Type.Literal('change')]),
  path: Type.String({ description: 'JSON pointer into the schema, e.g. /properties/amount/type' }),
  from: Type.Optional(Type.Unknown({ description: 'The current value (remove, change)' })),
  to: Type.Optional(Type.Unknown({ description: 'The proposed value (add, change)' })),
})
const Draft = Type.Object({
  name: Type.String(),
  env: Type.String(),
  sampled: Type.Integer({ description: 'Stored events read' }),
  schema: JsonSchema,
  current: Nullable(Type.Object({ version: Type.Integer(), schema: JsonSchema })),
  diff: Type.Array(Change, { description: 'From the current version to the proposed schema' }),
})
const ViolationsQuery = Type.Object({
  ...SchemaEnv.properties,
  since: Type.Optional(Type.String({ description: 'ms or ISO 8601; default 24 hours ago' })),
  until: Type.Optional(Type.String({ description: 'ms or ISO 8601; default now' })),
  bucket: Type.Optional(Type.Integer({ minimum: 1000, description: 'Bucket width in ms; default 3600000' })),
})
const Violations = Type.Object({
  name: Type.String(),
  env: Type.String(),
  total: Type.Integer({ description: 'Stored events of the range that carry violations' }),
  series: Type.Array(Type.Object({ t: Type.Integer({ description: 'Bucket start, ms' }), count: Type.Integer() })),
  samples: Type.Array(
    Type.Object({
      event_id: Type.String(),
      internal_id: Type.String(),
      received_at: Type.Integer(),
      violations: Type.Array(Type.String(), { examples: [['data/amount: must be number']] }),
    }),
    { description: 'The latest 20, newest first' },
  ),
  truncated: Type.Boolean({ description: 'Embedded mode read its bound of events: counts cover the newest part' }),
})

export interface SchemaTrafficDeps {
  schemas: Pick<Schemas, 'get'>
  events: Pick<EventStore, 'queryEvents'>
  insights: Pick<InsightsStore, 'schemaViolations'>
}

/** The newest `limit` stored events of the name (fewer when there are fewer). */
async function sampleEvents(deps: SchemaTrafficDeps, env: string, name: string, limit: number, since?: number) {
  const sampled: StoredEvent[] = []
  let cursor: string | undefined
  do {
    const page = await deps.events.queryEvents({
      name,
      env,
      receivedAfter: since,
      limit: Math.min(DRAFT_PAGE, limit - sampled.length),
      cursor,
    })
    sampled.push(...page.events)
    cursor = page.nextCursor ?? undefined
  } while (cursor !== undefined && sampled.length < limit)
  return sampled
}

const bodyTime = (since: number | string | undefined) =>
  since === undefined ? undefined : queryTime('since', String(since), 'body')

export function schemaTrafficRoutes(deps: SchemaTrafficDeps) {
  return async (app: FastifyInstance) => {
    const tags = ['Schemas']
    app.post<{
      Params: Static<typeof SchemaName>
      Querystring: Static<typeof SchemaEnv>
      Body: Static<typeof DraftBody>
    }>(
      '/v1/schemas/:name/draft',
      {
        preValidation: absentBodyIsEmpty,
        schema: {
          permission: 'schemas:read',
          tags,
          summary: 'Propose a schema from the stored events of a name, with its diff to the latest (saves nothing)',
          params: SchemaName,
          querystring: SchemaEnv,
          body: DraftBody,
          response: { 200: One(Draft), ...errors(400, 401, 404) },
        },
      },
      async (request) => {
        const env = request.query.env ?? PRODUCTION
        const { name } = request.params
        const since = bodyTime(request.body.since)
        const events = await sampleEvents(deps, env, name, request.body.limit ?? 1000, since)
        if (events.length === 0)
          throw new SluiceError('SCHEMA_NO_SAMPLES', `draft: no stored events of "${name}" in environment "${env}"`)
        const schema = draftSchema(events.map((e) => e.data))
        const doc = deps.schemas.get(env, name)
        const latest = doc?.versions[doc.versions.length - 1]
        const current = latest ? { version: latest.version, schema: latest.schema } : null
        const diff = diffSchemas(current?.schema ?? {}, schema)
        return { data: { name, env, sampled: events.length, schema, current, diff } }
      },
    )
    app.get<{ Params: Static<typeof SchemaName>; Querystring: Static<typeof ViolationsQuery> }>(
      '/v1/schemas/:name/violations',
      {
        schema: {
          permission: 'schemas:read',
          tags,
          summary: "A name's stored events with schema violations (warn mode): counts over time, the latest samples",
          params: SchemaName,
          querystring: ViolationsQuery,
          response: { 200: One(Violations), ...errors(400, 401) },
        },
      },
      async (request) => {
        const q = request.query
        const env = q.env ?? PRODUCTION
        const { name } = request.params
        const to = queryTime('until', q.until) ?? Date.now()
        const from = queryTime('since', q.since) ?? to - DAY
        const bucketMs = q.bucket ?? HOUR
        if (from >= to) throw new SluiceError('REQUEST_INVALID', 'query.since: must be before query.until')
        const buckets = Math.ceil((to - Math.floor(from / bucketMs) * bucketMs) / bucketMs)
        if (buckets > MAX_VIOLATION_BUCKETS) {
          throw new SluiceError(
            'REQUEST_INVALID',
            `query.bucket: the range holds ${buckets} buckets, at most ${MAX_VIOLATION_BUCKETS}: widen bucket`,
          )
        }
        const found = await deps.insights.schemaViolations({ from, to, env, name, bucketMs, samples: SAMPLES })
        return {
          data: {
            name,
            env,
            total: found.total,
            series: found.buckets.map((t, i) => ({ t, count: found.counts[i] })),
            samples: found.samples.map((s) => ({
              event_id: s.id,
              internal_id: s.internalId,
              received_at: s.receivedAt,
              violations: s.violations,
            })),
            truncated: found.truncated,
          },
        }
      },
    )
  }
}
