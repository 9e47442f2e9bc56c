// The Event API body as a schema: what the OpenAPI document shows and what a client generator
// reads. Ingest keeps its hand-written validator (core/event.ts `eventProblem`, faster on the
// hot path and with friendlier messages); tests/core/event-schema.test.ts proves with
// generated bodies that the two accept and reject the same events.
import { Type, type TObject } from '@sinclair/typebox'
import { MAX_DATE_MS, RESERVED_PREFIX, type EventLimits } from './event.ts'

export function eventSchema(limits: Pick<EventLimits, 'maxNameLength' | 'maxIdLength'>): TObject {
  return Type.Object(
    {
      name: Type.String({
        minLength: 1,
        maxLength: limits.maxNameLength,
        pattern: `^(?!${RESERVED_PREFIX})`,
        description: `The event name; the prefix "${RESERVED_PREFIX}" is reserved`,
        examples: ['user/signed.up'],
      }),
      data: Type.Record(Type.String(), Type.Unknown(), { description: 'Any JSON object', examples: [{ plan: 'pro' }] }),
      id: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: limits.maxIdLength,
          description: 'Dedup key: a repeat within the window is dropped',
        }),
      ),
      ts: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: MAX_DATE_MS,
          description: 'Milliseconds since the epoch, at most what a Date holds; default: receive time',
        }),
      ),
    },
    { additionalProperties: false },
  )
}

/** One event or an array of them (the whole batch is refused on the first bad event). */
export function eventBodySchema(limits: Pick<EventLimits, 'maxNameLength' | 'maxIdLength' | 'maxEvents'>) {
  const event = eventSchema(limits)
  return Type.Union([event, Type.Array(event, { minItems: 1, maxItems: limits.maxEvents })])
}
