// The REST API's shapes, declared once: fastify validates requests against them, serializes
// responses through them (fast-json-stringify: a field not declared here never leaves), and
// @fastify/swagger builds /v1/openapi.json from them.
import { type TLiteral, type TSchema, type TUnion, Type } from '@sinclair/typebox'
import { HTTP_ERROR_CODES } from '../core/errors.ts'
import { SCHEMA_MODES, UNKNOWN_NAME_MODES } from '../control/types.ts'
import { REQUEST_STATUSES } from '../store/requests-types.ts'
import { RUN_STATUSES } from '../store/runs-types.ts'

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
/** An enum as TypeBox declares one: a union of literals (`Static` is the union of the values). */
export const Literals = <T extends string>(values: readonly T[], options?: { description: string }) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<TLiteral<T>[]>
export const Time = (description: string) => Type.String({ description: `${description} (ISO 8601)` })
const Json = (description: string) => Type.Unknown({ description })

export const ErrorBody = Type.Object(
  {
    status: Type.Integer({ description: 'The HTTP status, repeated' }),
    code: Type.Union(
      HTTP_ERROR_CODES.map((c) => Type.Literal(c)),
      { description: 'See docs/errors.md' },
    ),
    error: Type.String({ description: 'What is wrong, naming the field' }),
  },
  {
    description: 'An error (codes: docs/errors.md)',
    examples: [{ status: 400, code: 'REQUEST_INVALID', error: 'body.name: must be string' }],
  },
)

/**
 * What any route may answer before or beside its own errors: 400 JSON_INVALID (a body that does not
 * parse, even where none is expected), 403 HOST_NOT_ALLOWED (the dev server's Host check),
 * 415 CONTENT_TYPE_UNSUPPORTED (a Content-Type that does not parse), 500 INTERNAL.
 */
const EDGE_STATUSES = [400, 403, 415, 500]

/** The error responses a route can give, each with the shared error body. */
export function errors(...statuses: number[]): Record<number, typeof ErrorBody> {
  return Object.fromEntries([...new Set([...statuses, ...EDGE_STATUSES])].map((status) => [status, ErrorBody]))
}

export const One = <T extends TSchema>(data: T) => Type.Object({ data })
export const List = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item), metadata: Type.Object({}) })
export const Page = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    metadata: Type.Object({
      cursor: Nullable(Type.String({ description: 'Pass as ?cursor= for the next page; null on the last page' })),
      limit: Type.Integer(),
    }),
  })

const Ulid = (what: string) =>
  Type.String({ description: `${what} (a ULID)`, examples: ['01JD4ZQ3V5M8X2K7T9R6B1N0CE'] })
export const IdParams = (what: string) => Type.Object({ id: Type.String({ description: what }) })
export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50, description: 'Page size' })),
  cursor: Type.Optional(Type.String({ description: 'metadata.cursor of the previous page' })),
}

// Environments and keys.
export const EnvName = Type.String({
  pattern: '^[a-z0-9][a-z0-9._-]{0,63}$',
  description: '1-64 characters of a-z, 0-9, ".", "_", "-", starting with a letter or digit',
  examples: ['staging'],
})
const MaxBodyBytes = Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, description: 'Event API body limit' })
const MaxEventsPerSecond = Type.Integer({ minimum: 1, description: 'Event API rate limit per ingest node' })
const SchemaModeField = Literals(SCHEMA_MODES)
const UnknownNamesField = Literals(UNKNOWN_NAME_MODES)
const MAX_RETENTION_DAYS = 36_500
const RetentionDaysField = (kind: string) =>
  Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 1,
        maximum: MAX_RETENTION_DAYS,
        description: `Days its ${kind} are kept; null gives the kind back to the server's default`,
      }),
    ),
  )
const RetentionDaysPatch = Type.Object(
  {
    events: RetentionDaysField('events'),
    runs: RetentionDaysField('runs (with their step outputs)'),
    requests: RetentionDaysField('raw webhook requests'),
  },
  { additionalProperties: false, description: 'Retention of this environment, per kind (docs/operations.md)' },
)
export const EnvLimits = {
  retention_days: Type.Optional(RetentionDaysPatch),
  max_body_bytes: Type.Optional(MaxBodyBytes),
  max_events_per_second: Type.Optional(MaxEventsPerSecond),
  schema_mode: Type.Optional(Literals(SCHEMA_MODES, { description: 'A schema violation: off, warn (kept), block' })),
  unknown_names: Type.Optional(
    Literals(UNKNOWN_NAME_MODES, { description: 'A name without a schema: allow, warn, block' }),
  ),
}
export const Env = Type.Object({
  name: Type.String(),
  kind: Literals(['standard', 'branch']),
  created_at: Nullable(Time('Creation time')),
  archived_at: Nullable(Time('Archive time of a branch environment')),
  max_body_bytes: Nullable(Type.Integer()),
  max_events_per_second: Nullable(Type.Integer()),
  schema_mode: SchemaModeField,
  unknown_names: UnknownNamesField,
  retention_days: Type.Object(
    {
      events: Nullable(Type.Integer()),
      runs: Nullable(Type.Integer()),
      requests: Nullable(Type.Integer()),
    },
    { description: "The environment's own retention in days per kind; null: the server's default" },
  ),
})
export const Key = Type.Object({
  id: Type.String(),
  env: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it' }),
  created_at: Nullable(Time('Creation time')),
  revoked_at: Nullable(Time('Revocation time')),
})
export const CreatedKey = Type.Object({
  ...Key.properties,
  key: Type.String({ description: 'Shown once, never again' }),
})

// Events.
export const StoredEvent = Type.Object({
  internal_id: Ulid('Internal ID'),
  id: Type.String({ description: "The dedup key: the caller's id, or the internal ID" }),
  name: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
  ts: Type.Integer({ description: 'Event time, milliseconds' }),
  env: Type.String(),
  received_at: Type.Integer({ description: 'Receive time, milliseconds' }),
  source: Type.Object(
    {
      kind: Literals(['api', 'webhook', 'function', 'replay', 'invoke', 'cron']),
      key_id: Type.Optional(Type.String()),
      event_id: Type.Optional(Type.String({ description: 'replay: the internal ID of the event copied' })),
      webhook_id: Type.Optional(Type.String()),
      request_id: Type.Optional(Type.String()),
      function_id: Type.Optional(Type.String()),
      run_id: Type.Optional(Type.String()),
      step_id: Type.Optional(Type.String()),
      seq: Type.Optional(Type.Integer({ description: "invoke: the caller's waiting record" })),
      target: Type.Optional(Type.String({ description: 'invoke: the function it runs' })),
      cron: Type.Optional(Type.String({ description: 'cron: the schedule that ticked' })),
    },
    { description: 'Where the event came from' },
  ),
  schema_violations: Type.Optional(
    Type.Array(Type.String(), { description: 'warn mode: what broke the schema, `data/<pointer>: <rule>`' }),
  ),
  deduplicated: Type.Optional(Type.Literal(true)),
  duplicate_of: Type.Optional(Ulid('Internal ID of the event this one duplicates')),
})
/** Times are milliseconds, or ISO 8601 strings. */
const TimeQuery = (description: string) => Type.Optional(Type.String({ description: `${description}: ms or ISO 8601` }))
export const EventsQuery = Type.Object({
  id: Type.Optional(Type.String({ description: 'Dedup key' })),
  name: Type.Optional(Type.String()),
  env: Type.Optional(Type.String()),
  received_after: TimeQuery('Received after'),
  received_before: TimeQuery('Received before'),
  include_duplicates: Type.Optional(Type.Boolean({ description: 'Also list events dropped by dedup' })),
  ...PageQuery,
})

// Functions and runs.
const CelKey = (description: string) => Type.Optional(Type.String({ description: `${description}: CEL over event` }))
const FlowControl = Type.Object(
  {
    concurrency: Type.Optional(
      Type.Array(
        Type.Object({
          limit: Type.Integer({ description: 'Runs executing a step at once' }),
          key: CelKey('The limit holds per value'),
          scope: Literals(['fn', 'env']),
        }),
      ),
    ),
    throttle: Type.Optional(
      Type.Object({
        limit: Type.Integer(),
        period_ms: Type.Integer(),
        burst: Type.Integer(),
        key: CelKey('Per value'),
      }),
    ),
    rate_limit: Type.Optional(
      Type.Object({ limit: Type.Integer(), period_ms: Type.Integer(), key: CelKey('Per value') }),
    ),
    debounce: Type.Optional(
      Type.Object({
        period_ms: Type.Integer(),
        key: CelKey('Per value'),
        timeout_ms: Type.Optional(Type.Integer({ description: 'How long a burst may postpone the run' })),
      }),
    ),
    batch_events: Type.Optional(
      Type.Object({
        max_size: Type.Integer(),
        timeout_ms: Type.Integer(),
        key: CelKey('Per value'),
        if: Type.Optional(Type.String({ description: 'Events it is false for run alone' })),
      }),
    ),
    priority: Type.Optional(
      Type.Object({ run: Type.String({ description: 'Seconds of head start: CEL over event' }) }),
    ),
    idempotency: CelKey('One run per value in 24 hours'),
    singleton: Type.Optional(Type.Object({ key: CelKey('Per value'), mode: Literals(['skip', 'cancel']) })),
  },
  { description: "The function's flow control (core/flow.ts), durations in milliseconds" },
)
export const FunctionSchema = Type.Object({
  id: Type.String({ description: '<app id>-<function id>' }),
  env: Type.String(),
  app_id: Type.String(),
  function_id: Type.String(),
  name: Type.String(),
  triggers: Type.Array(
    Type.Union([
      Type.Object({
        event: Type.String({ description: 'An event name, a `prefix/*`, or `*`' }),
        if: Type.Optional(Type.String({ description: 'A CEL filter over `event`' })),
      }),
      Type.Object({ cron: Type.String({ description: 'A cron schedule, with an optional `TZ=<zone> ` prefix' }) }),
    ]),
  ),
  cancel_on: Type.Array(
    Type.Object({
      event: Type.String(),
      match: Type.Optional(Type.String()),
      if: Type.Optional(Type.String()),
      timeout_ms: Nullable(Type.Integer()),
    }),
    { description: 'Events that end a run of the function' },
  ),
  retries: Type.Integer(),
  timeout_ms: Nullable(Type.Integer()),
  flow_control: Nullable(FlowControl),
  paused: Type.Boolean({ description: 'New runs are held until POST /v1/functions/<id>/resume' }),
  paused_at: Nullable(Time('When it was paused')),
  registered_at: Time('Registration time'),
})
const RunError = Type.Object({
  name: Type.String(),
  message: Type.String(),
  code: Type.Optional(Type.String()),
  stack: Type.Optional(Type.String()),
})
const CancelledBy = Type.Object(
  {
    kind: Literals(['api', 'event', 'singleton']),
    event_id: Type.Optional(Type.String()),
    event_name: Type.Optional(Type.String()),
    run_id: Type.Optional(Type.String({ description: 'singleton: the run that replaced it' })),
  },
  { description: 'What cancelled the run: POST /v1/runs/<id>/cancel, a cancelOn event, or a singleton run' },
)
const Pause = Type.Object(
  {
    kind: Literals(['sleep', 'event', 'invoke']),
    started_at: Time('When the pause began'),
    until: Time('When a sleep ends, or a wait or an invocation times out'),
    event: Type.Optional(Type.String({ description: 'A wait: the awaited event name' })),
    match: Type.Optional(Type.String()),
    if: Type.Optional(Type.String()),
    function: Type.Optional(Type.String({ description: 'An invocation: the function invoked' })),
    run_id: Type.Optional(Type.String({ description: "An invocation: the invoked function's run" })),
    matched_event_id: Type.Optional(Type.String({ description: 'A wait: the event that resumed it' })),
    timed_out: Type.Optional(Type.Boolean()),
  },
  { description: 'What a step that paused the run (sleep, waitForEvent, invoke) waited for, and how it ended' },
)
const Step = Type.Object({
  id: Type.String({ description: "The step's ID: an app's are the SDK's hashes of the names" }),
  name: Type.String({ description: 'The name the step was given (its ID for functions in JavaScript)' }),
  status: Literals(['completed', 'retrying', 'failed', 'waiting']),
  output: Json("The step's JSON result, or null"),
  error: Nullable(RunError),
  attempts: Type.Integer(),
  ended_at: Nullable(Time('End time')),
  pause: Nullable(Pause),
})
export const Run = Type.Object({
  run_id: Ulid('Run ID'),
  function_id: Type.String(),
  env: Type.String(),
  event_id: Ulid('Internal ID of the triggering event'),
  event_name: Type.String(),
  status: Literals(RUN_STATUSES),
  attempts: Type.Integer(),
  steps: Type.Array(Step),
  output: Json("The function's JSON result, or null"),
  error: Nullable(RunError),
  next_attempt_at: Nullable(Time('Next retry')),
  waiting_for: Nullable(Pause),
  event_ids: Type.Array(Type.String(), { description: "The run's events: a batch run's (batchEvents) all, in order" }),
  cancelled_by: Nullable(CancelledBy),
  queued_at: Nullable(Time('Queue time')),
  started_at: Nullable(Time('Start time')),
  ended_at: Nullable(Time('End time')),
})
export const RunsQuery = Type.Object({
  function: Type.Optional(Type.String({ description: '<app id>-<function id>' })),
  status: Type.Optional(Literals(RUN_STATUSES)),
  event: Type.Optional(Type.String({ description: 'Internal ID of the triggering event' })),
  env: Type.Optional(Type.String()),
  event_name: Type.Optional(Type.String({ description: "The triggering event's name" })),
  queued_after: TimeQuery('Queued after'),
  queued_before: TimeQuery('Queued before'),
  ...PageQuery,
})
export const EnvQuery = Type.Object({ env: Type.Optional(Type.String()) })

export const RequestStatusSchema = Literals(REQUEST_STATUSES)
