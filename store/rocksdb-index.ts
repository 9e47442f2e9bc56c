// The key layout of the embedded event store (spaces declared in core/keyspaces.ts):
//   E: the events, one key each or several to a value (store/rocksdb-events.ts)
//   I‹dedup id›<internalId> (only for events whose dedup id is not their internal ID),
//   N‹name›<internalId>, G‹env›<internalId>, P‹env›‹name›<internalId> → index entries (grouped, below)
//   H<receivedAt hex12><internalId> → off-clock entry, only for an event received more than OFF_CLOCK_MS
//     from its ID's time
// ‹s› is s after its length (4 hex digits): names and ids may hold any character, \0 too, so no
// separator could keep the entries of "a" apart from those of "a\0b"; a length can.
// An index value holds the events of one insert that share the key's name (env, dedup id) and
// their IDs' millisecond: `<internalId><entry>` for each, joined by ',', under the largest of those
// IDs. A 500-event request is then ~3 index puts, not 1,500: RocksDB's cost (memtable, flush,
// compaction) goes by entries (bench/store-query measures it). Since data format 3 a value of
// several starts with `=<entry>,`, the first event's entry, and a member with that entry is its
// internal ID alone: a request's events share theirs. An entry is `<receivedAt>`, or `d<receivedAt>` for a duplicate; an off-clock
// entry is the JSON of [receivedAt, duplicate, env, name, dedup id]: every filter is decided on the
// index, and an event is read only once it is known to match. Every key ends in an internal ID
// (a ULID), so a reverse scan lists milliseconds newest first, as the event space does, and a
// cursor or an ID-time window is a key range inside any index, widened to the whole millisecond
// of its upper end (indexEntries). An event inserted twice in different batches is in two values
// of the same millisecond: the reader gives it once. Receive time follows ID time except for
// events whose IDs were made earlier or elsewhere (a client's ID seed, a step retried hours after
// its run began): those, and only those, are also in H, so a receive-time query reads an ID-time
// window widened by OFF_CLOCK_MS plus the few H entries of its time range.
import { hash } from 'node:crypto'
import type { StoredEvent } from '../core/event.ts'
import { seededUlids } from '../core/ids.ts'
import { keyPrefix } from '../core/keyspaces.ts'
import type { Rocks, WriteOp } from '../core/rocks.ts'

/**
 * How far an event's receive time may be from its ID's time without an H entry. Ingest makes IDs
 * at receipt; a client's ID seed is its clock at the first attempt. A time query reads this much
 * beyond its range, so it stays small.
 */
export const OFF_CLOCK_MS = 2_000
export const ULID_LENGTH = 26
/** An internal ID's millisecond: its first 10 characters. */
export const TIME_LENGTH = 10
/** Above every ULID and digest character: `<ms>~` bounds every key of that millisecond. */
export const AFTER_MS = '~'
/** The digest of a value, after the largest ID in its key. */
const DIGEST_LENGTH = 8
const ONE_EVENT = '.'.repeat(DIGEST_LENGTH)
/** What heads an index value of data format 3: the entry of its members that are IDs alone ('=' is no ULID character). */
const SHARED = '='
/**
 * Index values a scan reads at a time: one may hold a whole request's events, and a page rarely
 * needs many, so small reads answer a page sooner (bench/store-query).
 */
const VALUES_PER_READ = 32
const MAX_ULID_MS = 2 ** 48 - 1

export interface IndexEntry {
  receivedAt: number
  duplicate: boolean
}

function readEntry(text: string): IndexEntry {
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

/** The largest internal ID the value of an index key (N, G, P, I) holds. */
export const largestIdOf = (key: string) => key.slice(-ULID_LENGTH - DIGEST_LENGTH, -DIGEST_LENGTH)

/** What an index key holds between its prefix and its ID: a name, an env, both, a dedup id. */
export const indexedPartOf = (prefix: string, key: string) => key.slice(prefix.length, -ULID_LENGTH - DIGEST_LENGTH)

/** Above every key of an indexed part: what follows the part in a key is an ID (digits and capitals). */
export const afterPart = (prefix: string, part: string) => prefix + part + AFTER_MS

export const receivedAtHex = (ms: number) => Math.min(Math.max(ms, 0), MAX_ULID_MS).toString(16).padStart(12, '0')

/** The smallest ULID of millisecond `ms` (clamped to what a ULID holds). */
export function ulidFloor(ms: number): string {
  return seededUlids(`${Math.min(Math.max(ms, 0), MAX_ULID_MS)},AAAAAAAAAAAAAA==`, 1)[0]
}

/** The internal IDs an event received at `receivedAt` may have without an H entry: [from, below). */
let clock = { receivedAt: NaN, from: '', below: '' }
function onClock(internalId: string, receivedAt: number): boolean {
  // Events of one request share a receive time: the bounds are encoded once for them all.
  if (clock.receivedAt !== receivedAt) {
    const time = (ms: number) => ulidFloor(ms).slice(0, TIME_LENGTH)
    clock = { receivedAt, from: time(receivedAt - OFF_CLOCK_MS), below: time(receivedAt + OFF_CLOCK_MS) + AFTER_MS }
  }
  return internalId >= clock.from && internalId < clock.below
}

/** An event's index entry, made once for the events of a request (they share a receive time). */
let entries = { receivedAt: NaN, entry: '', duplicate: '' }
function entryOf(event: StoredEvent): string {
  if (entries.receivedAt !== event.receivedAt) {
    const entry = String(event.receivedAt)
    entries = { receivedAt: event.receivedAt, entry, duplicate: `d${entry}` }
  }
  return event.duplicateOf === undefined ? entries.entry : entries.duplicate
}

/**
 * Puts the events' index entries in `ops`: the same write batch as the events, so both land or
 * neither. Per index key and millisecond one value (the layout above). An event whose dedup id is
 * its internal ID (no `id` given) has no I entry: a query by that id finds it under its E key.
 */
export function pushIndexOps(events: StoredEvent[], ops: WriteOp[]): void {
  const byMs = new Map<string, StoredEvent[]>()
  let ms = ''
  let same: StoredEvent[] = []
  for (const event of events) {
    // A request's IDs share their millisecond, and come one after another.
    if (ms === '' || !event.internalId.startsWith(ms)) {
      ms = event.internalId.slice(0, TIME_LENGTH)
      same = byMs.get(ms) ?? byMs.set(ms, []).get(ms)!
    }
    same.push(event)
    if (!onClock(event.internalId, event.receivedAt)) {
      const key = keyPrefix('eventsByReceivedAt', receivedAtHex(event.receivedAt) + event.internalId)
      const entry = [event.receivedAt, event.duplicateOf !== undefined, event.env, event.name, event.id]
      ops.push({ type: 'put', key, value: JSON.stringify(entry) })
    }
  }
  for (const same of byMs.values()) {
    if (same.length === 1) {
      const event = same[0]
      const member = group([event.internalId + entryOf(event)])
      const name = keyPart(event.name)
      const env = keyPart(event.env)
      if (event.id !== event.internalId) putGroup(ops, keyPrefix('eventsById', keyPart(event.id)), member)
      putGroup(ops, keyPrefix('eventsByName', name), member)
      putGroup(ops, keyPrefix('eventsByEnv', env), member)
      putGroup(ops, keyPrefix('eventsByEnvName', env + name), member)
      continue
    }
    // Keyed by the values themselves, not by key prefixes: each prefix is then made once per value.
    // A member whose entry is the first event's is its ID alone (the layout above).
    const shared = entryOf(same[0])
    const ids = new Map<string, string[]>()
    const names = new Map<string, string[]>()
    const envs = new Map<string, string[]>()
    const envNames = new Map<string, Map<string, string[]>>()
    const { name, env } = same[0]
    const oneKind = same.every((e) => e.name === name && e.env === env)
    const all: string[] = []
    for (const event of same) {
      const entry = entryOf(event)
      const member = entry === shared ? event.internalId : event.internalId + entry
      if (event.id !== event.internalId) append(ids, event.id, member)
      if (oneKind) all.push(member)
      else {
        append(names, event.name, member)
        append(envs, event.env, member)
        append(envNames.get(event.env) ?? envNames.set(event.env, new Map()).get(event.env)!, event.name, member)
      }
    }
    if (oneKind) {
      names.set(name, all)
      envs.set(env, all)
      envNames.set(env, new Map([[name, all]]))
    }
    // A group of all the millisecond's events (one name and env, as a request's usually are) has
    // the same value in N, G and P: it is made once.
    let whole: Group | undefined
    const put = (prefix: string, members: string[]) => {
      if (members.length < same.length) return putGroup(ops, prefix, group(members, shared))
      whole ??= group(members, shared)
      putGroup(ops, prefix, whole)
    }
    for (const [id, members] of ids) put(keyPrefix('eventsById', keyPart(id)), members)
    for (const [name, members] of names) put(keyPrefix('eventsByName', keyPart(name)), members)
    for (const [env, members] of envs) put(keyPrefix('eventsByEnv', keyPart(env)), members)
    for (const [env, byName] of envNames)
      for (const [name, members] of byName) put(keyPrefix('eventsByEnvName', keyPart(env) + keyPart(name)), members)
  }
}

function append(groups: Map<string, string[]>, value: string, member: string): void {
  const members = groups.get(value)
  if (members) members.push(member)
  else groups.set(value, [member])
}

/** One index value: its events' entries, by ID, and what its key ends in: the largest ID, then the digest of the value. */
interface Group {
  value: Buffer | string
  keyEnd: string
}

/**
 * The value of `members` (sorted here unless in order) and the key end it goes under; `shared`, the
 * entry of each member that is an ID alone, heads the value. A value of several is a buffer: the
 * name, env and env + name indexes of a request's events put the same one, encoded once.
 */
export function group(members: string[], shared?: string): Group {
  if (members.length === 1) {
    const member = shared !== undefined && members[0].length === ULID_LENGTH ? members[0] + shared : members[0]
    return { value: member, keyEnd: member.slice(0, ULID_LENGTH) + ONE_EVENT }
  }
  // A request's IDs ascend: most groups are in order already.
  for (let i = 1; i < members.length; i++) {
    if (members[i - 1] > members[i]) {
      members.sort()
      break
    }
  }
  const value = Buffer.from(shared === undefined ? members.join(',') : `${SHARED}${shared},${members.join(',')}`)
  // The digest tells apart two inserts that share their largest ID but not all events (a batch
  // delivered again, cut otherwise): neither overwrites the other. The same insert again is the
  // same key. A value of one event needs none ('.' is no base64url digit).
  const digest = hash('sha1', value, 'base64url').slice(0, DIGEST_LENGTH)
  return { value, keyEnd: members[members.length - 1].slice(0, ULID_LENGTH) + digest }
}

function putGroup(ops: WriteOp[], prefix: string, group: Group): void {
  ops.push({ type: 'put', key: prefix + group.keyEnd, value: group.value })
}

export interface IndexMember extends IndexEntry {
  internalId: string
}

/**
 * The entries of one index (`prefix`, below `end`, the prefix's range end) with internal IDs in
 * [from, below), newest first, each event once (newestFirst).
 */
export async function* indexEntries(
  rocks: Rocks,
  prefix: string,
  end: string,
  ids: { from?: string; below?: string } = {},
): AsyncGenerator<IndexMember> {
  for await (const member of newestFirst(rocks, prefix, end, ids, indexValues))
    yield { internalId: member.slice(0, ULID_LENGTH), ...readEntry(member.slice(ULID_LENGTH)) }
}

const indexValues: ValueLayout<string> = {
  members(_key, value) {
    const members = value.toString('latin1').split(',')
    if (!members[0].startsWith(SHARED)) return members
    const shared = members[0].slice(SHARED.length)
    return members.slice(1).map((m) => (m.length === ULID_LENGTH ? m + shared : m))
  },
  idOf: (member) => member.slice(0, ULID_LENGTH),
  largestId: largestIdOf,
}

/** How a space's values hold their members, each with an internal ID of its own. */
export interface ValueLayout<Member> {
  members(key: string, value: Buffer): Member[]
  idOf(member: Member): string
  /** The largest internal ID the value of `key` may hold, all of one millisecond. */
  largestId(key: string): string
}

/**
 * The members of the values of one space (`prefix`, below `end`) with internal IDs in [from, below),
 * newest first, each ID once. A value holds one millisecond's IDs and is filed under its largest, so
 * the scan starts after the last key of below's millisecond, and an ID is given once the scan is at
 * a key whose largest ID is not above it: no value read later can hold a larger one.
 */
export async function* newestFirst<Member>(
  rocks: Rocks,
  prefix: string,
  end: string,
  ids: { from?: string; below?: string },
  layout: ValueLayout<Member>,
): AsyncGenerator<Member> {
  const { from, below } = ids
  const { idOf } = layout
  const lt = below === undefined ? end : prefix + below.slice(0, TIME_LENGTH) + AFTER_MS
  let held: Member[] = []
  let previous: string | undefined
  const byId = (a: Member, b: Member) => (idOf(a) < idOf(b) ? -1 : idOf(a) > idOf(b) ? 1 : 0)
  /** `members` (sorted) newest first, but an ID just given: the event was inserted twice, in two values. */
  function* give(members: Member[]): Generator<Member> {
    for (let i = members.length - 1; i >= 0; i--) {
      const internalId = idOf(members[i])
      if (internalId === previous) continue
      previous = internalId
      yield members[i]
    }
  }
  for await (const { key, value } of rocks.scan({
    gte: prefix + (from ?? ''),
    lt,
    reverse: true,
    batch: VALUES_PER_READ,
  })) {
    for (const member of layout.members(key, value)) {
      const id = idOf(member)
      const inRange = (from === undefined || id >= from) && (below === undefined || id < below)
      if (inRange && (previous === undefined || id < previous)) held.push(member)
    }
    const largest = layout.largestId(key)
    if (held.every((m) => idOf(m) < largest)) continue
    held.sort(byId)
    let cut = held.length
    while (cut > 0 && idOf(held[cut - 1]) >= largest) cut--
    yield* give(held.slice(cut))
    held = held.slice(0, cut)
  }
  yield* give(held.sort(byId))
}
