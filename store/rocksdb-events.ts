// The event space (E) of the embedded store: the events of one write that share their IDs'
// millisecond are kept together, up to EVENTS_PER_VALUE to a value, as the indexes keep their
// entries (rocksdb-index.ts): RocksDB's cost, the binding's included, goes by keys far more than by
// bytes (bench/ingest/floor.ts: one key per event was 3.9 of the 5.9 µs an event's writes and JSON
// cost). Two kinds of key, told apart by length:
//   E<internalId> → the event's JSON (an event alone in its millisecond; every event of data format 1)
//   E<largest internalId><digest> → lines joined by '\n': first the JSON of the fields its events
//     share (`{"name","env","receivedAt","source"}`, the first event's), then `<internalId><rest>`
//     for each event, by ID, where `rest` is the JSON of the fields that differ: `data` always; `id`
//     unless it is the internal ID; `ts` unless it is the receive time; the others (name, env,
//     receivedAt, source, schemaViolations, duplicateOf) where they are not the shared ones. Data
//     format 2 wrote each line as `<internalId><the event's JSON>`, with no first line: a value that
//     starts with '{' is of format 3, one that starts with an ID of format 2. The events of one
//     request share all four fields, so a line is little more than its data: half the bytes of the
//     whole event's JSON, and half the CPU of a 500-event request (docs/operations.md, "Each event
//     written once, and once only").
// JSON text never holds a raw '\n', so each line of a value is one event, found by its ID without
// parsing the others. The digest is the index's: two writes that share their largest ID but not
// all events never overwrite each other. A value holds one millisecond, under its largest ID, so a
// range delete of the IDs before a time (retention) takes whole values, and an ID is read by
// scanning its millisecond's few keys.
import type { StoredEvent } from '../core/event.ts'
import { keyPrefix } from '../core/keyspaces.ts'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import {
  AFTER_MS,
  TIME_LENGTH,
  ULID_LENGTH,
  group,
  internalIdOf,
  largestIdOf,
  newestFirst,
  type ValueLayout,
} from './rocksdb-index.ts'

/**
 * Events to a value at most: a value is read whole to give one of its events (a query by name
 * fetches events from many values), so ~32 events (~20 KiB) keep that read small while RocksDB
 * and the binding pay for one key in 32.
 */
const EVENTS_PER_VALUE = 32
const PREFIX = keyPrefix('events')
const ONE_EVENT_KEY_LENGTH = PREFIX.length + ULID_LENGTH
const NEWLINE = 10
const OPEN_BRACE = 123

export const eventKey = (internalId: string) => PREFIX + internalId

/** The fields a value's events share, stated once in its first line. */
type Shared = Pick<StoredEvent, 'name' | 'env' | 'receivedAt' | 'source'>

/**
 * Puts `events` in `ops`: runs of one millisecond, up to EVENTS_PER_VALUE each, one value apiece.
 * An event alone in its run is stored as its JSON text, `textOf(i)` (the bytes read off the log,
 * where there are some).
 */
export function pushEventOps(
  events: StoredEvent[],
  ops: WriteOp[],
  textOf: (i: number) => Buffer | string = (i) => JSON.stringify(events[i]),
): void {
  for (let i = 0; i < events.length; ) {
    const ms = events[i].internalId.slice(0, TIME_LENGTH)
    let end = i + 1
    while (end < events.length && end - i < EVENTS_PER_VALUE && events[end].internalId.startsWith(ms)) end++
    if (end - i === 1) ops.push({ type: 'put', key: eventKey(events[i].internalId), value: textOf(i) })
    else ops.push(sharedValue(events.slice(i, end)))
    i = end
  }
}

function sharedValue(events: StoredEvent[]): WriteOp {
  const { name, env, receivedAt, source } = events[0]
  const shared: Shared = { name, env, receivedAt, source }
  const sourceText = JSON.stringify(source)
  // Each line starts with its ID, so lines sort by it (a request's IDs ascend: most are in order
  // already). Told by the IDs: comparing or slicing the lines would copy each into a string of its own.
  const lines = events.map((e) => e.internalId + restOf(e, shared, sourceText))
  let ids = events.map((e) => e.internalId)
  if (ids.some((id, k) => k > 0 && ids[k - 1] > id)) {
    lines.sort()
    ids = lines.map((l) => l.slice(0, ULID_LENGTH))
  }
  // Keyed as an index value of those IDs is: the largest, then the digest of them all.
  const { keyEnd } = group(ids)
  return { type: 'put', key: eventKey(keyEnd), value: `${JSON.stringify(shared)}\n${lines.join('\n')}` }
}

/** The JSON of what `event` does not share with the value's first line (the layout above). */
function restOf(event: StoredEvent, shared: Shared, sourceText: string): string {
  const rest: Partial<StoredEvent> = {}
  if (event.id !== event.internalId) rest.id = event.id
  if (event.name !== shared.name) rest.name = event.name
  rest.data = event.data
  if (!Object.is(event.ts, event.receivedAt)) rest.ts = event.ts
  if (event.env !== shared.env) rest.env = event.env
  if (!Object.is(event.receivedAt, shared.receivedAt)) rest.receivedAt = event.receivedAt
  if (event.source !== shared.source && JSON.stringify(event.source) !== sourceText) rest.source = event.source
  if (event.schemaViolations !== undefined) rest.schemaViolations = event.schemaViolations
  if (event.duplicateOf !== undefined) rest.duplicateOf = event.duplicateOf
  return JSON.stringify(rest)
}

/** The event of a line of a format 3 value: its rest over the shared fields, in the order JSON.stringify(event) writes them. */
function eventOf(internalId: string, restText: string, shared: Shared): StoredEvent {
  const rest = JSON.parse(restText) as Partial<StoredEvent>
  const receivedAt = 'receivedAt' in rest ? (rest.receivedAt as number) : shared.receivedAt
  return {
    internalId,
    id: internalId,
    name: shared.name,
    data: rest.data as StoredEvent['data'],
    ts: receivedAt,
    env: shared.env,
    receivedAt,
    source: shared.source,
    ...rest,
  }
}

/** The shared fields of a value of format 3, or undefined for one of format 2 (the layout above). */
function sharedOf(value: Buffer): Shared | undefined {
  if (value[0] !== OPEN_BRACE) return undefined
  const end = value.indexOf(NEWLINE)
  return JSON.parse(value.toString('utf8', 0, end === -1 ? value.length : end)) as Shared
}

/**
 * The events of `internalIds` found, by ID: first by their own keys in one multi-get (an event
 * alone in its millisecond, every event of format 1); the rest from the values of their
 * milliseconds, by one scan across them while few other values lie between, then a scan of each
 * millisecond not read through. A scan costs far more to start than a key of a multi-get
 * (bench/store-query: a page by name of events each alone in its millisecond took 4.3 ms at p50 and
 * 33 at p99 with a scan per event, 2.3 and 4.6 by their keys).
 */
export async function readEvents(rocks: Rocks, internalIds: string[]): Promise<Map<string, StoredEvent>> {
  const found = new Map<string, StoredEvent>()
  const own = await rocks.getMany(internalIds.map(eventKey))
  const byMs = new Map<string, Set<string>>()
  for (let i = 0; i < internalIds.length; i++) {
    const id = internalIds[i]
    const value = own[i]
    if (value) {
      found.set(id, JSON.parse(value.toString()) as StoredEvent)
      continue
    }
    const ms = id.slice(0, TIME_LENGTH)
    const wanted = byMs.get(ms)
    if (wanted) wanted.add(id)
    else byMs.set(ms, new Set([id]))
  }
  if (byMs.size === 0) return found
  /** Takes from the value of `key` what `wanted` (of its millisecond) asks for. */
  const take = (key: string, value: Buffer, wanted: Set<string>) => {
    const shared = key.length === ONE_EVENT_KEY_LENGTH ? undefined : sharedOf(value)
    for (const id of wanted) {
      const event =
        key.length === ONE_EVENT_KEY_LENGTH
          ? key.endsWith(id)
            ? (JSON.parse(value.toString()) as StoredEvent)
            : undefined
          : eventIn(value, id, shared)
      if (event === undefined) continue
      found.set(id, event)
      wanted.delete(id)
    }
  }
  // A page of one name's events from batches: their milliseconds are near one another.
  const spans = [...byMs.keys()].sort()
  let budget = 2 * [...byMs.values()].reduce((n, wanted) => n + wanted.size, 0) + 8
  let left = byMs.size
  for await (const { key, value } of rocks.scan({
    gte: eventKey(spans[0]),
    lt: eventKey(spans[spans.length - 1] + AFTER_MS),
    batch: 16,
  })) {
    const wanted = byMs.get(key.slice(PREFIX.length, PREFIX.length + TIME_LENGTH))
    if (wanted && wanted.size > 0) {
      take(key, value, wanted)
      if (wanted.size === 0 && --left === 0) return found
    }
    if (--budget === 0) break
  }
  // Then a scan of each millisecond not read through.
  const readMs = async (ms: string, wanted: Set<string>) => {
    for await (const { key, value } of rocks.scan({ gte: eventKey(ms), lt: eventKey(ms + AFTER_MS) })) {
      take(key, value, wanted)
      if (wanted.size === 0) return
    }
  }
  await Promise.all([...byMs].filter(([, wanted]) => wanted.size > 0).map(([ms, wanted]) => readMs(ms, wanted)))
  return found
}

/** Event `id` of a value of several, if it holds it; `shared` is the value's first line (format 3). */
function eventIn(value: Buffer, id: string, shared: Shared | undefined): StoredEvent | undefined {
  let start = 0
  if (shared !== undefined || value.toString('latin1', 0, ULID_LENGTH) !== id) {
    const at = value.indexOf(`\n${id}`)
    if (at === -1) return undefined
    start = at + 1
  }
  const end = value.indexOf(NEWLINE, start)
  const text = value.toString('utf8', start + ULID_LENGTH, end === -1 ? value.length : end)
  return shared === undefined ? (JSON.parse(text) as StoredEvent) : eventOf(id, text, shared)
}

/** Every event of the value of `key`. */
export function eventsIn(key: string, value: Buffer): StoredEvent[] {
  if (key.length === ONE_EVENT_KEY_LENGTH) return [JSON.parse(value.toString()) as StoredEvent]
  const lines = value.toString().split('\n')
  const shared = sharedOf(value)
  if (shared === undefined) return lines.map((l) => JSON.parse(l.slice(ULID_LENGTH)) as StoredEvent)
  return lines.slice(1).map((l) => eventOf(l.slice(0, ULID_LENGTH), l.slice(ULID_LENGTH), shared))
}

const eventValues: ValueLayout<StoredEvent> = {
  members: eventsIn,
  idOf: (event) => event.internalId,
  largestId: (key) => (key.length === ONE_EVENT_KEY_LENGTH ? internalIdOf(key) : largestIdOf(key)),
}

/** The events with internal IDs in [from, below), newest first (below `end`, the space's range end). */
export async function* eventsNewestFirst(
  rocks: Rocks,
  end: string,
  ids: { from?: string; below?: string },
): AsyncGenerator<{ internalId: string; event: StoredEvent }> {
  for await (const event of newestFirst(rocks, PREFIX, end, ids, eventValues))
    yield { internalId: event.internalId, event }
}
