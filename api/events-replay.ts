// `POST /v1/events/<internal id>/replay`: runs an event's functions again by sending a copy of it
// through the pipeline as a new event: a new internal ID (also its dedup id, so dedup lets it
// through), the same name, data, ts and environment, and source `{kind: 'replay', event_id}`.
// A copy rather than a re-run of the old runs: run IDs derive from the event, so the runners would
// rightly drop the original as already processed.
import type { FastifyInstance } from 'fastify'
import { errors } from './schemas.ts'
import { Type, type Static } from '@sinclair/typebox'
import type { Output } from '../bus/output.ts'
import type { EventRecord } from '../core/event.ts'
import { SluiceError } from '../core/errors.ts'
import { isUlid, newUlid } from '../core/ids.ts'
import type { EventStore } from '../store/types.ts'

const Params = Type.Object({ id: Type.String({ description: 'Internal ID of a stored event' }) })
type Params = Static<typeof Params>
const Replayed = Type.Object({
  data: Type.Object({ internal_id: Type.String(), replay_of: Type.String() }),
})

export function eventReplayRoutes(deps: { events: EventStore; incoming: Output<EventRecord> }) {
  return async (app: FastifyInstance) => {
    app.post<{ Params: Params }>(
      '/v1/events/:id/replay',
      {
        schema: {
          permission: 'events:write',
          params: Params,
          response: { 202: Replayed, ...errors(401, 404, 503) },
        },
      },
      async (request, reply) => {
        const { id } = request.params
        const event = isUlid(id) ? await deps.events.getEvent(id) : null
        if (!event) throw new SluiceError('NOT_FOUND', `event "${id}" does not exist (or is not stored yet)`)
        if (event.duplicateOf !== undefined) {
          throw new SluiceError(
            'REQUEST_INVALID',
            `event "${id}" was dropped as a duplicate of ${event.duplicateOf}: replay that one`,
          )
        }
        const internalId = newUlid()
        const copy: EventRecord = {
          internalId,
          id: internalId,
          name: event.name,
          data: event.data,
          ts: event.ts,
          env: event.env,
          receivedAt: Date.now(),
          source: { kind: 'replay', eventId: event.internalId },
        }
        // Answers only once the copy is durable in the log, as the Event API does.
        await deps.incoming.publish([copy])
        reply.code(202)
        return { data: { internal_id: internalId, replay_of: event.internalId } }
      },
    )
  }
}
