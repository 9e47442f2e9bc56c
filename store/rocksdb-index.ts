// The key layout of the embedded event store (spaces declared in core/keyspaces.ts):
//   E<internalId> → event JSON
//   I‹dedup id›<internalId> (only when the dedup id is not the internal ID),
//   N‹name›<internalId>, G‹env›<internalId>, P‹env›‹name›<internalId> → index entry
//   H<receivedAt hex12><internalId> → off-clock entry, only for an event received more than OFF_CLOCK_MS
//     from its ID's time
// ‹s› is s after its length (4 hex digits): names and ids may hold any character, \0 too, so no
// separator could keep the entries of "a" apart from those of "a\0b"; a length can.
// An index entry is `<receivedAt>`, or `d<receivedAt>` for a duplicate; an off-clock entry is the JSON
// of [receivedAt, duplicate, env, name, dedup id]: every filter is decided on the index, and an event
// is read only once it is known to match. Every index ends in the internal ID
// (a ULID), so each lists newest first in a reverse scan, as the event space does, and a cursor or
// an ID-time window is a key range inside any of them. Receive time follows ID time except for
// events whose IDs were made earlier or elsewhere (a client's ID seed, a step retried hours after
// its run began): those, and only those, are also in H, so a receive-time query reads an ID-time
// window widened by OFF_CLOCK_MS plus the few H entries of its time range.
import type { Logger } from 'pino'
import type { StoredEvent } from '../core/event.ts'
import { seededUlids } from '../core/ids.ts'
import { deleteRange, keyPrefix, keyRange } from '../core/keyspaces.ts'
import type { Rocks, WriteOp } from '../core/rocks.ts'

/**
 * How far an event's receive time may be from its ID's time without an H entry. Ingest makes IDs
 * at receipt; a client's ID seed is its clock at the first attempt. A time query reads this much
 * beyond its range, so it stays small.
 */
export const OFF_CLOCK_MS = 2_000
/** 2: the N, G, P and H indexes, I with lengths and receive times. Format 1 had E and `I<id>\0<internalId>` → ''. */
const FORMAT = '2'
const ULID_LENGTH = 26
const MAX_ULID_MS = 2 ** 48 - 1

export const eventKey = (internalId: string) => keyPrefix('events', internalId)

export interface IndexEntry {
  receivedAt: number
  duplicate: boolean
}

export function indexEntry(event: StoredEvent): string {
  return (event.duplicateOf === undefined ? '' : 'd') + event.receivedAt
}

export function readEntry(value: Buffer): IndexEntry {
  const text = value.toString('latin1')
  const duplicate = text.charCodeAt(0) === 100 // 'd'
  return { receivedAt: Number(duplicate ? text.slice(1) : text), duplicate }
}

export interface OffClockEntry extends IndexEntry {
  env: string
  name: string
  id: string
}

export function readOffClockEntry(value: Buffer): OffClockEntry {
  type Stored = [receivedAt: number, duplicate: boolean, env: string, name: string, id: string]
  const [receivedAt, duplicate, env, name, id] = JSON.parse(value.toString()) as Stored
  return { receivedAt, duplicate, env, name, id }
}

/** A value inside a key: its length first, so no other value's keys start with it. */
export const keyPart = (value: string) => value.length.toString(16).padStart(4, '0') + value

/** The internal ID every index key ends in. */
export const internalIdOf = (key: string) => key.slice(-ULID_LENGTH)

export const receivedAtHex = (ms: number) => Math.min(Math.max(ms, 0), MAX_ULID_MS).toString(16).padStart(12, '0')

/** The smallest ULID of millisecond `ms` (clamped to what a ULID holds). */
export function ulidFloor(ms: number): string {
  return seededUlids(`${Math.min(Math.max(ms, 0), MAX_ULID_MS)},AAAAAAAAAAAAAA==`, 1)[0]
}

/** The ID-time prefixes (10 characters) an event received at `receivedAt` may have without an H entry. */
let clock = { receivedAt: NaN, from: '', to: '' }
function onClock(internalId: string, receivedAt: number): boolean {
  // Events of one request share a receive time: the bounds are encoded once for them all.
  if (clock.receivedAt !== receivedAt) {
    const time = (ms: number) => ulidFloor(ms).slice(0, 10)
    clock = { receivedAt, from: time(receivedAt - OFF_CLOCK_MS), to: time(receivedAt + OFF_CLOCK_MS) }
  }
  const time = internalId.slice(0, 10)
  return time >= clock.from && time <= clock.to
}

/**
 * Puts the event's index entries in `ops`: the same write batch as the event, so both land or neither.
 * An event whose dedup id is its internal ID (no `id` given) has no I entry: a query by that id finds it
 * under its E key. Every put costs ~1-2 µs of CPU, so there is none to spare.
 */
export function pushIndexOps(event: StoredEvent, ops: WriteOp[]): void {
  const id = event.internalId
  const value = Buffer.from(indexEntry(event), 'latin1') // one buffer for every entry, not one each
  const name = keyPart(event.name)
  const env = keyPart(event.env)
  if (event.id !== id) ops.push({ type: 'put', key: keyPrefix('eventsById', keyPart(event.id) + id), value })
  ops.push(
    { type: 'put', key: keyPrefix('eventsByName', name + id), value },
    { type: 'put', key: keyPrefix('eventsByEnv', env + id), value },
    { type: 'put', key: keyPrefix('eventsByEnvName', env + name + id), value },
  )
  if (!onClock(id, event.receivedAt)) {
    const key = keyPrefix('eventsByReceivedAt', receivedAtHex(event.receivedAt) + id)
    const entry = [event.receivedAt, event.duplicateOf !== undefined, event.env, event.name, event.id]
    ops.push({ type: 'put', key, value: JSON.stringify(entry) })
  }
}

/**
 * Builds the indexes of a data dir written before them, in batches of `batchEvents`, then marks the
 * format. Index puts are idempotent, so a crash midway is finished by the next open; events are
 * only read, never rewritten, so nothing stored can be lost to the upgrade.
 */
export async function upgradeEventIndexes(rocks: Rocks, log?: Logger, batchEvents = 5_000): Promise<number> {
  const formatKey = keyPrefix('eventsFormat')
  if ((await rocks.get(formatKey))?.toString() === FORMAT) return 0
  // Format 1's id index (`I<id>\0<internalId>`) goes; it is rebuilt below in the new layout.
  await rocks.write([deleteRange('eventsById')])
  const started = Date.now()
  for await (const _ of rocks.scan({ ...keyRange('events'), limit: 1 })) {
    log?.info('building the event store indexes for events stored before them (once; ~1 min per million events)')
  }
  let ops: WriteOp[] = []
  let indexed = 0
  for await (const { value } of rocks.scan(keyRange('events'))) {
    pushIndexOps(JSON.parse(value.toString()) as StoredEvent, ops)
    if (++indexed % batchEvents === 0) {
      await rocks.write(ops)
      ops = []
    }
  }
  await rocks.write([...ops, { type: 'put', key: formatKey, value: FORMAT }])
  if (indexed > 0) log?.info({ events: indexed, ms: Date.now() - started }, 'event store indexes built')
  return indexed
}
