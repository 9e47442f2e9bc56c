// EventStore on the embedded RocksDB. Keys: `E<internalId>` → event JSON,
// `I<dedup id>\0<internalId>` → '' (lookup by the caller's id).
import type { Rocks, WriteOp } from '../core/rocks.ts'
import type { StoredEvent } from '../core/event.ts'
import { jsonTextOf } from '../core/json-text.ts'
import type { EventPage, EventQuery, EventStore } from './types.ts'

export function createRocksEventStore(rocks: Rocks): EventStore {
  async function getEvent(internalId: string): Promise<StoredEvent | null> {
    const value = await rocks.get('E' + internalId)
    return value ? (JSON.parse(value.toString()) as StoredEvent) : null
  }

  function matches(event: StoredEvent, q: EventQuery): boolean {
    return (q.id === undefined || event.id === q.id)
      && (q.name === undefined || event.name === q.name)
      && (q.env === undefined || event.env === q.env)
      && (q.receivedAfter === undefined || event.receivedAt > q.receivedAfter)
      && (q.receivedBefore === undefined || event.receivedAt < q.receivedBefore)
      && (q.includeDuplicates === true || event.duplicateOf === undefined)
  }

  async function* candidates(q: EventQuery): AsyncGenerator<StoredEvent> {
    if (q.id === undefined) {
      for await (const { value } of rocks.scan({ gte: 'E', lt: q.cursor ? 'E' + q.cursor : 'F', reverse: true })) yield JSON.parse(value.toString())
      return
    }
    const prefix = `I${q.id}\0`
    for await (const { key } of rocks.scan({ gte: prefix, lt: q.cursor ? prefix + q.cursor : `I${q.id}\u0001`, reverse: true })) {
      const event = await getEvent(key.slice(prefix.length))
      if (event) yield event
    }
  }

  return {
    async insertEvents(events) {
      const ops: WriteOp[] = []
      for (const event of events) {
        ops.push({ type: 'put', key: 'E' + event.internalId, value: jsonTextOf(event) ?? JSON.stringify(event) })
        ops.push({ type: 'put', key: `I${event.id}\0${event.internalId}`, value: '' })
      }
      await rocks.write(ops)
    },
    getEvent,
    async queryEvents(q): Promise<EventPage> {
      const events: StoredEvent[] = []
      for await (const event of candidates(q)) {
        if (!matches(event, q)) continue
        if (events.length === q.limit) return { events, nextCursor: events[events.length - 1].internalId }
        events.push(event)
      }
      return { events, nextCursor: null }
    },
    close: async () => {},
  }
}
