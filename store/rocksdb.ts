// EventStore on the embedded RocksDB; key layout and indexes in rocksdb-index.ts. A query reads the
// narrowest index its filters allow (dedup id, env + name, name, env, else every event), newest
// first, and reads at most `scanBudget` entries, an event read counting as several of them:
// past that it returns the page it has, with a cursor to continue from, so no query's cost grows
// with the store.
import type { StoredEvent } from '../core/event.ts'
import { keyPrefix, keyRange, type KeySpaceName } from '../core/keyspaces.ts'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import type { EventPage, EventQuery, EventStore } from './types.ts'
import { deleteEventsBefore } from './rocksdb-retention.ts'
import {
  OFF_CLOCK_MS,
  indexEntries,
  internalIdOf,
  keyPart,
  pushIndexOps,
  readOffClockEntry,
  receivedAtHex,
  ulidFloor,
  type IndexEntry,
  type IndexMember,
  type OffClockEntry,
} from './rocksdb-index.ts'
import { eventsNewestFirst, pushEventOps, readEvents } from './rocksdb-events.ts'

export interface RocksEventStoreOptions {
  /** Entries one query may read before it answers with what it found and a cursor. */
  scanBudget?: number
}

/** The RocksDB store keeps each event as its JSON text, so it can take that text as read off the log. */
export interface RocksEventStore extends EventStore {
  /** As insertEvents, writing `texts[i]`, `events[i]`'s JSON text, as it is instead of serializing the event. */
  insertEventTexts(events: StoredEvent[], texts: Buffer[]): Promise<void>
  /** The writes that insert `events`, for a write of the caller's (one-pass/index.ts). */
  insertOps(events: StoredEvent[]): WriteOp[]
}

export const DEFAULT_SCAN_BUDGET = 5_000
/** An event read, in index entries: parsing it, plus a random read for one fetched by ID (bench/store-query). */
const SCANNED_EVENT_COST = 5
const FETCHED_EVENT_COST = 20
/** Events fetched by one multi-get while a query reads an index. */
const CHUNK = 128

interface Plan {
  space: KeySpaceName
  sub: string
}

function planOf(q: EventQuery): Plan {
  if (q.id !== undefined) return { space: 'eventsById', sub: keyPart(q.id) }
  if (q.name !== undefined && q.env !== undefined) {
    return { space: 'eventsByEnvName', sub: keyPart(q.env) + keyPart(q.name) }
  }
  if (q.name !== undefined) return { space: 'eventsByName', sub: keyPart(q.name) }
  if (q.env !== undefined) return { space: 'eventsByEnv', sub: keyPart(q.env) }
  return { space: 'events', sub: '' }
}

function matchesEntry(entry: IndexEntry, q: EventQuery): boolean {
  return (
    (q.receivedAfter === undefined || entry.receivedAt > q.receivedAfter) &&
    (q.receivedBefore === undefined || entry.receivedAt < q.receivedBefore) &&
    (q.includeDuplicates === true || !entry.duplicate)
  )
}

function matchesOffClock(entry: OffClockEntry, q: EventQuery): boolean {
  return (
    (q.id === undefined || entry.id === q.id) &&
    (q.name === undefined || entry.name === q.name) &&
    (q.env === undefined || entry.env === q.env) &&
    matchesEntry(entry, q)
  )
}

const matches = (event: StoredEvent, q: EventQuery) =>
  matchesOffClock({ ...event, duplicate: event.duplicateOf !== undefined }, q)

/** The internal IDs an event received in the query's time range has, unless it is in the off-clock index. */
function idWindow(q: EventQuery): { from?: string; below?: string } {
  return {
    from: q.receivedAfter === undefined ? undefined : ulidFloor(q.receivedAfter + 1 - OFF_CLOCK_MS),
    below: q.receivedBefore === undefined ? undefined : ulidFloor(q.receivedBefore + OFF_CLOCK_MS),
  }
}

export function createRocksEventStore(rocks: Rocks, options: RocksEventStoreOptions = {}): RocksEventStore {
  const budget = options.scanBudget ?? DEFAULT_SCAN_BUDGET

  async function getEvent(internalId: string): Promise<StoredEvent | null> {
    const [event] = await getEvents([internalId])
    return event ?? null
  }

  /** The events of `internalIds` found, in that order. */
  async function getEvents(internalIds: string[]): Promise<StoredEvent[]> {
    const found = await readEvents(rocks, internalIds)
    return internalIds.flatMap((id) => found.get(id) ?? [])
  }

  /**
   * Matching events of the off-clock index in the query's time range that the ID window leaves
   * out, newest first; null when the range holds more than the budget (the query then reads its
   * index without a window).
   */
  async function offClock(q: EventQuery, window: { from?: string; below?: string }): Promise<StoredEvent[] | null> {
    const after = q.receivedAfter === undefined ? '' : receivedAtHex(q.receivedAfter + 1)
    const before = q.receivedBefore === undefined ? undefined : receivedAtHex(q.receivedBefore)
    const range = keyRange('eventsByReceivedAt')
    const ids: string[] = []
    let read = 0
    for await (const { key, value } of rocks.scan({
      gte: range.gte + after,
      lt: before === undefined ? range.lt : range.gte + before,
    })) {
      if (++read > budget) return null
      const id = internalIdOf(key)
      const inWindow =
        (window.from === undefined || id >= window.from) && (window.below === undefined || id < window.below)
      if (!inWindow && (q.cursor === undefined || id < q.cursor) && matchesOffClock(readOffClockEntry(value), q)) {
        ids.push(id)
        read += FETCHED_EVENT_COST - 1
      }
    }
    const events = (await getEvents(ids)).filter((e) => matches(e, q))
    return events.sort((a, b) => (a.internalId < b.internalId ? 1 : -1))
  }

  /** The events (E) or index entries of a plan with internal IDs in [from, below), newest first. */
  async function* list(
    plan: Plan,
    prefix: string,
    from: string | undefined,
    below: string | undefined,
  ): AsyncGenerator<IndexMember | { internalId: string; event: StoredEvent }> {
    const end = keyRange(plan.space, plan.sub).lt
    if (plan.space !== 'events') return yield* indexEntries(rocks, prefix, end, { from, below })
    yield* eventsNewestFirst(rocks, end, { from, below })
  }

  async function queryEvents(q: EventQuery): Promise<EventPage> {
    if (q.limit <= 0) return { events: [], nextCursor: null }
    const timed = q.receivedAfter !== undefined || q.receivedBefore !== undefined
    let window = timed ? idWindow(q) : {}
    let late = timed ? await offClock(q, window) : []
    if (late === null) window = {}
    // An event whose dedup id is its internal ID has no I entry (rocksdb-index.ts): merged in like those of H.
    if (q.id !== undefined && (q.cursor === undefined || q.id < q.cursor)) {
      const self = await getEvent(q.id)
      if (self && self.id === q.id && matches(self, q) && !late?.some((e) => e.internalId === self.internalId)) {
        late = [...(late ?? []), self].sort((a, b) => (a.internalId < b.internalId ? 1 : -1))
      }
    }
    const plan = planOf(q)
    const prefix = keyPrefix(plan.space, plan.sub)
    const below = [q.cursor, window.below].reduce<string | undefined>(
      (low, bound) => (bound !== undefined && (low === undefined || bound < low) ? bound : low),
      undefined,
    )

    const page: StoredEvent[] = []
    let lateAt = 0
    let full = false
    /** Adds events in order, first those of `late` newer than `below`; false once a page and one more are found. */
    const add = (event: StoredEvent | undefined, below: string | undefined): boolean => {
      for (; lateAt < (late?.length ?? 0) && (below === undefined || late![lateAt].internalId > below); lateAt++) {
        if (!push(late![lateAt])) return false
      }
      return event === undefined || !matches(event, q) || push(event)
    }
    const push = (event: StoredEvent): boolean => {
      if (page.length < q.limit) page.push(event)
      else full = true
      return !full
    }
    let chunk: Array<{ id: string; event?: StoredEvent }> = []
    const flush = async (): Promise<boolean> => {
      const missing = chunk.filter((c) => c.event === undefined).map((c) => c.id)
      const fetched = new Map((await getEvents(missing)).map((e) => [e.internalId, e]))
      const ok = chunk.every((c) => add(c.event ?? fetched.get(c.id), c.id))
      chunk = []
      return ok
    }
    const done = (): EventPage => ({ events: page, nextCursor: full ? page[page.length - 1].internalId : null })

    let read = 0
    for await (const listed of list(plan, prefix, window.from, below)) {
      const id = listed.internalId
      if ('event' in listed) {
        chunk.push({ id, event: listed.event })
        read += SCANNED_EVENT_COST - 1
      } else if (matchesEntry(listed, q)) {
        chunk.push({ id })
        read += FETCHED_EVENT_COST - 1
      }
      // Index entries leave only a dedup id query's name and env to check: a chunk of what the page
      // still needs is usually enough.
      if (chunk.length >= Math.min(CHUNK, q.limit + 1 - page.length) && !(await flush())) return done()
      if (++read < budget) continue
      // Out of budget: what was found, and a cursor below the last entry read.
      const scanned = id
      if (!(await flush()) || !add(undefined, scanned)) return done()
      return { events: page, nextCursor: scanned }
    }
    if (!(await flush())) return done()
    add(undefined, undefined)
    return done()
  }

  /** `textOf(i)`: the JSON text of `events[i]`, written as it is when the event is alone in its value. */
  function insertOps(events: StoredEvent[], textOf?: (i: number) => Buffer | string): WriteOp[] {
    const ops: WriteOp[] = []
    pushEventOps(events, ops, textOf)
    pushIndexOps(events, ops)
    return ops
  }

  return {
    insertEvents: (events) => rocks.write(insertOps(events)),
    insertEventTexts: (events, texts) => rocks.write(insertOps(events, (i) => texts[i])),
    insertOps: (events) => insertOps(events),
    getEvent,
    queryEvents,
    deleteBefore: (before, options) => deleteEventsBefore(rocks, before, options),
    close: async () => {},
  }
}
