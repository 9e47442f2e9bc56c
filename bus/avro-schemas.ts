// The Avro schemas of the records on Sluice's topics, documented in docs/avro.md (a test keeps the
// two equal), and the mapping between them and the TypeScript records. Free-form JSON (an event's
// `data`) travels as a JSON string: Avro has no type for "any JSON", and a string keeps it exact.
import type { EventRecord, EventSource, StoredEvent } from '../core/event.ts'
import { encodeRawBody, rawBodyBytes, type RawWebhookRequest } from '../core/raw-request.ts'

const timestampMillis = { type: 'long', logicalType: 'timestamp-millis' }

/** On `incoming`, `events` and `duplicates`. */
export const eventSchema = {
  type: 'record',
  name: 'Event',
  namespace: 'dev.sluice',
  doc: 'An accepted event as it travels between stages (core/event.ts).',
  fields: [
    { name: 'internalId', type: 'string', doc: 'ULID assigned at ingest; what the Event API returned.' },
    { name: 'id', type: 'string', doc: "Dedup key: the caller's id, or the internal ID when none was given." },
    { name: 'name', type: 'string' },
    { name: 'data', type: 'string', doc: 'The event payload, a JSON object, as JSON text.' },
    { name: 'ts', type: timestampMillis, doc: "The event's time: the caller's ts, or the receive time." },
    { name: 'env', type: 'string', doc: 'Environment name.' },
    { name: 'receivedAt', type: timestampMillis, doc: 'When ingest received it; the dedup window is measured on it.' },
    {
      name: 'source',
      doc: 'Where the event came from: one branch per kind.',
      type: [
        {
          type: 'record',
          name: 'ApiSource',
          doc: 'Sent to the Event API.',
          fields: [{ name: 'keyId', type: ['null', 'string'], default: null }],
        },
        {
          type: 'record',
          name: 'WebhookSource',
          doc: 'Made by a webhook transform.',
          fields: [
            { name: 'webhookId', type: 'string' },
            { name: 'requestId', type: 'string' },
          ],
        },
        {
          type: 'record',
          name: 'FunctionSource',
          doc: 'Sent by a function step (step.sendEvent).',
          fields: [
            { name: 'functionId', type: 'string' },
            { name: 'runId', type: 'string' },
            { name: 'stepId', type: 'string' },
          ],
        },
        {
          type: 'record',
          name: 'ReplaySource',
          doc: 'A copy of a stored event, sent again by POST /v1/events/<id>/replay.',
          fields: [{ name: 'eventId', type: 'string' }],
        },
        {
          type: 'record',
          name: 'InvokeSource',
          doc: "Sent by step.invoke: runs function `target` only; its end resumes the caller's record `seq`.",
          fields: [
            { name: 'functionId', type: 'string' },
            { name: 'runId', type: 'string' },
            { name: 'stepId', type: 'string' },
            { name: 'seq', type: 'int' },
            { name: 'target', type: 'string' },
            { name: 'routeKey', type: ['null', 'string'], default: null },
          ],
        },
        {
          type: 'record',
          name: 'CronSource',
          doc: "A tick of function `functionId`'s cron schedule: runs that function only.",
          fields: [
            { name: 'functionId', type: 'string' },
            { name: 'cron', type: 'string' },
          ],
        },
      ],
    },
    {
      name: 'duplicateOf',
      type: ['null', 'string'],
      default: null,
      doc: 'On `duplicates`: the internal ID of the event this one duplicates.',
    },
    {
      name: 'schemaViolations',
      type: { type: 'array', items: 'string' },
      default: [],
      doc: "warn mode: what broke the event name's schema, `data/<pointer>: <rule>` (docs/schemas.md).",
    },
  ],
} as const

/** On `raw`. */
export const rawRequestSchema = {
  type: 'record',
  name: 'RawWebhookRequest',
  namespace: 'dev.sluice',
  doc: 'A webhook request exactly as ingest captured it, before any transform ran (core/raw-request.ts).',
  fields: [
    { name: 'requestId', type: 'string', doc: 'ULID assigned at ingest.' },
    { name: 'webhookId', type: 'string' },
    {
      name: 'attempt',
      type: 'int',
      doc: '1 on first delivery; each replay publishes the request again with the next attempt.',
    },
    { name: 'receivedAt', type: timestampMillis },
    { name: 'ip', type: 'string', doc: "The client's address." },
    { name: 'headers', type: { type: 'map', values: 'string' }, doc: 'Canonical header names (X-Github-Event).' },
    { name: 'query', type: { type: 'map', values: { type: 'array', items: 'string' } } },
    { name: 'body', type: 'bytes', doc: 'The body exactly as sent (signatures are computed over these bytes).' },
    {
      name: 'resumeMarker',
      type: ['null', 'boolean'],
      default: null,
      doc: "true: not a request but a paused webhook's resume, which releases its held requests in order.",
    },
  ],
} as const

const SOURCE_BRANCH = {
  api: 'dev.sluice.ApiSource',
  webhook: 'dev.sluice.WebhookSource',
  function: 'dev.sluice.FunctionSource',
  replay: 'dev.sluice.ReplaySource',
  invoke: 'dev.sluice.InvokeSource',
  cron: 'dev.sluice.CronSource',
} as const

function sourceToAvro(source: EventSource): Record<string, unknown> {
  switch (source.kind) {
    case 'api':
      return { [SOURCE_BRANCH.api]: { keyId: source.keyId ?? null } }
    case 'webhook':
      return { [SOURCE_BRANCH.webhook]: { webhookId: source.webhookId, requestId: source.requestId } }
    case 'function':
      return { [SOURCE_BRANCH.function]: { functionId: source.functionId, runId: source.runId, stepId: source.stepId } }
    case 'replay':
      return { [SOURCE_BRANCH.replay]: { eventId: source.eventId } }
    case 'invoke': {
      const { kind: _, routeKey, ...fields } = source
      return { [SOURCE_BRANCH.invoke]: { ...fields, routeKey: routeKey ?? null } }
    }
    case 'cron':
      return { [SOURCE_BRANCH.cron]: { functionId: source.functionId, cron: source.cron } }
    default: {
      const unknown: never = source
      throw new Error(`unknown event source ${JSON.stringify(unknown)}`)
    }
  }
}

export function eventToAvro(event: StoredEvent): Record<string, unknown> {
  return {
    internalId: event.internalId,
    id: event.id,
    name: event.name,
    data: JSON.stringify(event.data),
    ts: event.ts,
    env: event.env,
    receivedAt: event.receivedAt,
    source: sourceToAvro(event.source),
    duplicateOf: event.duplicateOf ?? null,
    schemaViolations: event.schemaViolations ?? [],
  }
}

interface AvroEvent {
  internalId: string
  id: string
  name: string
  data: string
  ts: number
  env: string
  receivedAt: number
  source: Record<string, Record<string, string | number | null>>
  duplicateOf: string | null
  /** Absent when read with an older writer schema's default (`[]`). */
  schemaViolations?: string[]
}

export function eventFromAvro(value: AvroEvent): StoredEvent {
  const [branch, fields] = Object.entries(value.source)[0]
  const event: StoredEvent = {
    internalId: value.internalId,
    id: value.id,
    name: value.name,
    data: JSON.parse(value.data) as EventRecord['data'],
    ts: value.ts,
    env: value.env,
    receivedAt: value.receivedAt,
    source: sourceFromAvro(branch, fields),
  }
  if (value.duplicateOf !== null) event.duplicateOf = value.duplicateOf
  if (value.schemaViolations && value.schemaViolations.length > 0) event.schemaViolations = value.schemaViolations
  return event
}

function sourceFromAvro(branch: string, avro: Record<string, string | number | null>): EventSource {
  const fields = avro as Record<string, string | null>
  if (branch === SOURCE_BRANCH.invoke) {
    const { functionId, runId, stepId, target } = fields as Record<string, string>
    const routeKey = typeof fields.routeKey === 'string' ? { routeKey: fields.routeKey } : {}
    return { kind: 'invoke', functionId, runId, stepId, seq: avro.seq as number, target, ...routeKey }
  }
  if (branch === SOURCE_BRANCH.cron) return { kind: 'cron', functionId: fields.functionId!, cron: fields.cron! }
  if (branch === SOURCE_BRANCH.webhook)
    return { kind: 'webhook', webhookId: fields.webhookId!, requestId: fields.requestId! }
  if (branch === SOURCE_BRANCH.function)
    return { kind: 'function', functionId: fields.functionId!, runId: fields.runId!, stepId: fields.stepId! }
  if (branch === SOURCE_BRANCH.replay) return { kind: 'replay', eventId: fields.eventId! }
  return fields.keyId === null || fields.keyId === undefined ? { kind: 'api' } : { kind: 'api', keyId: fields.keyId }
}

export function rawRequestToAvro(request: RawWebhookRequest): Record<string, unknown> {
  const { body: _, bodyEncoding: __, ...fields } = request
  return { ...fields, body: rawBodyBytes(request), resumeMarker: request.resumeMarker ?? null }
}

export function rawRequestFromAvro(
  value: Omit<RawWebhookRequest, 'body' | 'bodyEncoding' | 'resumeMarker'> & {
    body: Buffer
    resumeMarker?: boolean | null
  },
): RawWebhookRequest {
  return {
    requestId: value.requestId,
    webhookId: value.webhookId,
    attempt: value.attempt,
    receivedAt: value.receivedAt,
    ip: value.ip,
    headers: { ...value.headers },
    query: Object.fromEntries(Object.entries(value.query).map(([k, v]) => [k, [...v]])),
    ...encodeRawBody(value.body),
    ...(value.resumeMarker === true && { resumeMarker: true as const }),
  }
}
