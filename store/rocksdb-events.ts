// The event space (E) of the embedded store: the events of one write that share their IDs'
// millisecond are kept together, up to EVENTS_PER_VALUE to a value, as the indexes keep their
// entries (rocksdb-index.ts): RocksDB's cost, the binding's included, goes by keys far more than by
// bytes (bench/ingest/floor.ts: one key per event was 3.9 of the 5.9 µs an event's writes and JSON
// cost). Two kinds of key, told apart by length:
//   E<internalId> → the event's JSON (an event alone in its millisecond; every event of data format 1)
//   E<largest internalId><digest> → `<internalId><JSON>` of each event, by ID, joined by '\n'
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

export const eventKey = (internalId: string) => PREFIX + internalId

/** Puts `events` (`texts[i]` being `events[i]`'s JSON) in `ops`: runs of one millisecond, up to EVENTS_PER_VALUE each, one value apiece. */
export function pushEventOps(events: StoredEvent[], texts: ArrayLike<Buffer | string>, ops: WriteOp[]): void {
  for (let i = 0; i < events.length; ) {
    const ms = events[i].internalId.slice(0, TIME_LENGTH)
    let end = i + 1
    while (end < events.length && end - i < EVENTS_PER_VALUE && events[end].internalId.startsWith(ms)) end++
    if (end - i === 1) ops.push({ type: 'put', key: eventKey(events[i].internalId), value: texts[i] })
    else ops.push(sharedValue(events, texts, i, end))
    i = end
  }
}

function sharedValue(events: StoredEvent[], texts: ArrayLike<Buffer | string>, from: number, to: number): WriteOp {
  // Each line starts with its ID, so lines sort by it (a request's IDs ascend: most are in order
  // already). Told by the IDs: comparing or slicing the lines would copy each into a string of its own.
  const lines = Array.from({ length: to - from }, (_, k) => events[from + k].internalId + texts[from + k].toString())
  let ids = events.slice(from, to).map((e) => e.internalId)
  if (ids.some((id, k) => k > 0 && ids[k - 1] > id)) {
    lines.sort()
    ids = lines.map((l) => l.slice(0, ULID_LENGTH))
  }
  // Keyed as an index value of those IDs is: the largest, then the digest of them all.
  const { keyEnd } = group(ids)
  return { type: 'put', key: eventKey(keyEnd), value: lines.join('\n') }
}

/**
 * The JSON text of each of `internalIds` found, by ID: first by their own keys in one multi-get (an
 * event alone in its millisecond, every event of format 1); the rest from the values of their
 * milliseconds, by one scan across them while few other values lie between, then a scan of each
 * millisecond not read through. A scan costs far more to start than a key of a multi-get
 * (bench/store-query: a page by name of events each alone in its millisecond took 4.3 ms at p50 and
 * 33 at p99 with a scan per event, 2.3 and 4.6 by their keys).
 */
export async function readEventTexts(rocks: Rocks, internalIds: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  const own = await rocks.getMany(internalIds.map(eventKey))
  const byMs = new Map<string, Set<string>>()
  for (let i = 0; i < internalIds.length; i++) {
    const id = internalIds[i]
    const value = own[i]
    if (value) {
      found.set(id, value.toString())
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
    for (const id of wanted) {
      const text =
        key.length === ONE_EVENT_KEY_LENGTH ? (key.endsWith(id) ? value.toString() : undefined) : line(value, id)
      if (text === undefined) continue
      found.set(id, text)
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

/** The JSON of event `id` in a value of several, if it holds it. */
function line(value: Buffer, id: string): string | undefined {
  let start = 0
  if (value.toString('latin1', 0, ULID_LENGTH) !== id) {
    const at = value.indexOf(`\n${id}`)
    if (at === -1) return undefined
    start = at + 1
  }
  const end = value.indexOf(NEWLINE, start)
  return value.toString('utf8', start + ULID_LENGTH, end === -1 ? value.length : end)
}

const eventValues: ValueLayout = {
  members: (key, value) =>
    key.length === ONE_EVENT_KEY_LENGTH ? [key.slice(-ULID_LENGTH) + value.toString()] : value.toString().split('\n'),
  largestId: (key) => (key.length === ONE_EVENT_KEY_LENGTH ? internalIdOf(key) : largestIdOf(key)),
}

/** The events with internal IDs in [from, below), newest first (below `end`, the space's range end). */
export async function* eventsNewestFirst(
  rocks: Rocks,
  end: string,
  ids: { from?: string; below?: string },
): AsyncGenerator<{ internalId: string; event: StoredEvent }> {
  for await (const member of newestFirst(rocks, PREFIX, end, ids, eventValues))
    yield { internalId: member.slice(0, ULID_LENGTH), event: JSON.parse(member.slice(ULID_LENGTH)) as StoredEvent }
}
