// Removing chosen events from the embedded store (erasure, and retention of one environment
// among others): an event shares its values with the others of its millisecond and write, in E
// and in every index (rocksdb-index.ts), so what holds it is rewritten, not edited. Per
// millisecond of the events to remove: every event of that millisecond is read (E holds them all,
// a few values), every key of that millisecond goes from E and from the indexes those events are
// in (range deletes inside each index part; the off-clock entries by key), and the events that
// stay are inserted again, regrouped, in the same write: a reader sees the millisecond before or
// after, never without its survivors. A millisecond is in the past by then (retention's are days
// old, an erased event was stored before its erasure began), so no insert races the rewrite but
// one of an event stored again with an old ID, which a redelivery could bring: it is idempotent
// and would be rewritten by the next pass.
import type { StoredEvent } from '../core/event.ts'
import { keyPrefix } from '../core/keyspaces.ts'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { eventKey, eventsIn, pushEventOps } from './rocksdb-events.ts'
import { AFTER_MS, TIME_LENGTH, keyPart, pushIndexOps, receivedAtHex } from './rocksdb-index.ts'

/** Milliseconds rewritten per write. */
const MS_PER_WRITE = 64

/**
 * Removes the events of `internalIds` with their index entries; returns the events removed (those
 * found). Idempotent: an event already gone is not found again.
 */
export async function removeEvents(rocks: Rocks, internalIds: Iterable<string>): Promise<StoredEvent[]> {
  const byMs = new Map<string, Set<string>>()
  for (const id of internalIds) {
    const ms = id.slice(0, TIME_LENGTH)
    const ids = byMs.get(ms)
    if (ids) ids.add(id)
    else byMs.set(ms, new Set([id]))
  }
  const removed: StoredEvent[] = []
  let ops: WriteOp[] = []
  let pending = 0
  for (const [ms, ids] of byMs) {
    removed.push(...(await rewriteMs(rocks, ms, ids, ops)))
    if (++pending < MS_PER_WRITE) continue
    await rocks.write(ops)
    ops = []
    pending = 0
  }
  if (ops.length > 0) await rocks.write(ops)
  return removed
}

/** Puts in `ops` the rewrite of millisecond `ms` without the events of `ids`; the events it removes. */
async function rewriteMs(rocks: Rocks, ms: string, ids: Set<string>, ops: WriteOp[]): Promise<StoredEvent[]> {
  const keys: string[] = []
  const byId = new Map<string, StoredEvent>()
  for await (const { key, value } of rocks.scan({ gte: eventKey(ms), lt: eventKey(ms + AFTER_MS) })) {
    keys.push(key)
    // An event inserted twice (two batches) is in two values: once here.
    for (const event of eventsIn(key, value)) if (!byId.has(event.internalId)) byId.set(event.internalId, event)
  }
  const all = [...byId.values()]
  const removed = all.filter((e) => ids.has(e.internalId))
  if (removed.length === 0) return []
  for (const key of keys) ops.push({ type: 'del', key })
  const parts = new Set<string>()
  for (const e of all) {
    const name = keyPart(e.name)
    const env = keyPart(e.env)
    parts.add(keyPrefix('eventsByName', name))
    parts.add(keyPrefix('eventsByEnv', env))
    parts.add(keyPrefix('eventsByEnvName', env + name))
    if (e.id !== e.internalId) parts.add(keyPrefix('eventsById', keyPart(e.id)))
    ops.push({ type: 'del', key: keyPrefix('eventsByReceivedAt', receivedAtHex(e.receivedAt) + e.internalId) })
  }
  for (const prefix of parts) ops.push({ type: 'delRange', start: prefix + ms, end: prefix + ms + AFTER_MS })
  const kept = all.filter((e) => !ids.has(e.internalId)).sort((a, b) => (a.internalId < b.internalId ? -1 : 1))
  pushEventOps(kept, ops)
  pushIndexOps(kept, ops)
  return removed
}
