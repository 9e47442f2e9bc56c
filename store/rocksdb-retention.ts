// Retention of the embedded event store (SLUICE_EVENT_RETENTION_MS): the events whose IDs are older
// than a time go, with their index and off-clock entries (layout: rocksdb-index.ts). The keys of an
// event's entries are found from the event itself, a page of events at a time, and each page's events and entries
// go in one write: a pass cut short by a crash leaves no entry without its event, and the next
// pass goes on from the oldest event left.
import type { StoredEvent } from '../core/event.ts'
import { keyPrefix, keyRange, type KeySpaceName } from '../core/keyspaces.ts'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { keyPart, offClockKey, ulidFloor } from './rocksdb-index.ts'

/** Events read and deleted per write. */
const PAGE = 5_000

/**
 * Deletes the events whose internal IDs were made before `before` (ms): the ID's time, which is
 * the receive time unless a client's ID seed set it. Returns how many were deleted. `signal` stops it
 * between pages (a shutdown does not wait for a long first pass).
 */
export async function deleteEventsBefore(rocks: Rocks, before: number, signal?: AbortSignal): Promise<number> {
  const cutoff = ulidFloor(before)
  const end = keyPrefix('events', cutoff)
  let from = keyRange('events').gte
  let deleted = 0
  while (!signal?.aborted) {
    // Per index, the keys' parts before their IDs (a name, an env, both, a dedup id) this page's events have.
    const subs = new Map<KeySpaceName, Set<string>>([
      ['eventsByName', new Set()],
      ['eventsByEnv', new Set()],
      ['eventsByEnvName', new Set()],
      ['eventsById', new Set()],
    ])
    const ops: WriteOp[] = []
    let last: string | undefined
    let page = 0
    for await (const { key, value } of rocks.scan({ gte: from, lt: end, limit: PAGE })) {
      const event = JSON.parse(value.toString()) as StoredEvent
      const offClock = offClockKey(event)
      if (offClock !== undefined) ops.push({ type: 'del', key: offClock })
      subs.get('eventsByName')!.add(keyPart(event.name))
      subs.get('eventsByEnv')!.add(keyPart(event.env))
      subs.get('eventsByEnvName')!.add(keyPart(event.env) + keyPart(event.name))
      if (event.id !== event.internalId) subs.get('eventsById')!.add(keyPart(event.id))
      last = key
      page++
    }
    if (last === undefined) break
    // An index value holds one millisecond's events under the largest of their IDs: every value of
    // a key part below the cutoff's millisecond holds only older events. A dedup id has a value or
    // two (its events), found and deleted one by one; a name or an env has many: one range delete.
    for (const [space, parts] of subs) {
      for (const part of parts) {
        const range = { gte: keyPrefix(space, part), lt: keyPrefix(space, part + cutoff) }
        if (space !== 'eventsById') ops.push({ type: 'delRange', start: range.gte, end: range.lt })
        else for await (const { key } of rocks.scan(range)) ops.push({ type: 'del', key })
      }
    }
    const next = `${last}\0`
    ops.push({ type: 'delRange', start: from, end: next })
    await rocks.write(ops)
    deleted += page
    from = next
  }
  // Range deletes leave the bytes on disk until a compaction reaches them; events are keyed by
  // time, so their old files might wait long for one.
  if (deleted > 0 && !signal?.aborted) await rocks.compact({ gte: keyRange('events').gte, lt: end })
  return deleted
}
