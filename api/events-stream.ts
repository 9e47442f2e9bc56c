// `GET /v1/events/stream`: newly stored events as Server-Sent Events (`event: event`, data the
// event as GET /v1/events shows it), for the dashboard's live Events page and `curl -N`.
//
// Behind the same signing-key guard as the rest of /v1: the dashboard reads it with fetch() and
// the Authorization header rather than EventSource (which cannot send headers), so no key or
// token ever travels in a URL.
//
// It polls the store rather than the log: the store is what every api node can read in both
// modes, and an event shown live is then one GET /v1/events/<id> can open. Each poll reads only
// the newest POLL_WINDOW events (cheap on RocksDB and ClickHouse, whatever the filters) and
// sends those it has not sent yet; a window entirely new means more arrived than it holds,
// and a `gap` message says so.
import type { FastifyInstance } from 'fastify'
import { errors } from './schemas.ts'
import { Type, type Static } from '@sinclair/typebox'
import type { StoredEvent } from '../core/event.ts'
import type { EventStore } from '../store/types.ts'
import { presentEvent } from './present.ts'

export const POLL_INTERVAL_MS = 1_000
export const POLL_WINDOW = 200
const HEARTBEAT_MS = 15_000

const StreamQuery = Type.Object(
  {
    env: Type.Optional(Type.String({ minLength: 1, description: 'Only events of this environment' })),
    name: Type.Optional(Type.String({ minLength: 1, description: 'Only events of this name' })),
    since: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'Also send stored events received at or after this time (ms), to close the gap after loading a list',
      }),
    ),
  },
  { additionalProperties: false },
)
type StreamQuery = Static<typeof StreamQuery>

export function eventsStreamRoutes(deps: { events: EventStore }, config = { pollIntervalMs: POLL_INTERVAL_MS }) {
  return async (app: FastifyInstance) => {
    // Open streams never end on their own: the server ends them when it closes, before the store does.
    const open = new Set<() => void>()
    app.addHook('preClose', async () => {
      for (const end of open) end()
    })
    app.get<{ Querystring: StreamQuery }>(
      '/v1/events/stream',
      {
        schema: {
          tags: ['Events'],
          summary: 'Events as they are stored, as server-sent events (text/event-stream)',
          querystring: StreamQuery,
          response: {
            200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: Type.String() } } },
            ...errors(400, 401),
          },
        },
      },
      async (request, reply) => {
        const { env, name, since } = request.query
        const wanted = (e: StoredEvent) =>
          (env === undefined || e.env === env) && (name === undefined || e.name === name)
        // Read before answering: a store that fails gives a JSON error rather than a broken stream.
        let seen = new Set<string>()
        const first = await deps.events.queryEvents({ limit: POLL_WINDOW })
        reply.hijack()
        const out = reply.raw
        out.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          'x-accel-buffering': 'no',
        })
        out.write(': connected\n\n')
        const send = (events: StoredEvent[]) => {
          for (const e of events.reverse())
            if (wanted(e)) out.write(`event: event\ndata: ${JSON.stringify(presentEvent(e))}\n\n`)
        }
        seen = new Set(first.events.map((e) => e.internalId))
        if (since !== undefined) send(first.events.filter((e) => e.receivedAt >= since))

        let closed = false
        let timer: NodeJS.Timeout | undefined
        let lastWrite = Date.now()
        const end = () => {
          closed = true
          clearTimeout(timer)
          open.delete(end)
          out.end()
        }
        open.add(end)
        out.once('close', end)
        const poll = async () => {
          try {
            const page = await deps.events.queryEvents({ limit: POLL_WINDOW })
            if (closed) return
            const fresh = page.events.filter((e) => !seen.has(e.internalId))
            if (fresh.length === POLL_WINDOW && seen.size > 0) out.write(`event: gap\ndata: {"skipped":true}\n\n`)
            seen = new Set(page.events.map((e) => e.internalId))
            send(fresh)
            if (fresh.length > 0) lastWrite = Date.now()
            // A comment now and then keeps proxies from closing an idle stream.
            if (Date.now() - lastWrite >= HEARTBEAT_MS) {
              out.write(': ping\n\n')
              lastWrite = Date.now()
            }
          } catch (err) {
            request.log.warn({ err }, 'event stream: reading the store failed; trying again')
          }
          if (!closed) timer = setTimeout(poll, config.pollIntervalMs)
        }
        timer = setTimeout(poll, config.pollIntervalMs)
      },
    )
  }
}
