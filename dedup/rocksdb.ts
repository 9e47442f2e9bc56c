// DedupStore on RocksDB (dedup/ARCHITECTURE.md). A key first seen at t lives in bucket floor(t / window):
// `D<prefix><bucket hex12>\0<env>\0<id>` → `<receivedAt>,<internalId>`. An event without a caller
// id (its internal ID is its dedup key) is marked in `U` (core/keyspaces.ts), in groups: one value
// per bucket, environment and millisecond of the internal IDs (an ID's first 10 characters), holding
// runs of the IDs received at one time, `<receivedAt>,<id>,<id>…`, joined by ';'. A request's events
// are then a put or two, not one each: RocksDB's cost (the binding, memtable, flush, compaction) goes
// by entries. A lookup reads the event's bucket and the one before (three near a bucket's end), and
// for an id of ULID form also its millisecond's group in `U` in each of them: point reads, batched
// over the whole batch. It compares times exactly; expiry range-deletes every bucket older than the
// previous one.
import type { Rocks, WriteOp } from '../core/rocks.ts'
import type { DedupKey, DedupStore, SeenEntry } from './types.ts'
import { keyPrefix } from '../core/keyspaces.ts'

/** How far apart the receive times of two ingest nodes may be for the same id. */
const CLOCK_SKEW_MS = 60_000
/** The form of an internal ID (core/ids.ts): only such an id can equal an earlier event's. */
const ULID_FORM = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/
const ULID_LENGTH = 26
/** An internal ID's millisecond: its first 10 characters. */
const TIME_LENGTH = 10

export interface RocksDedupConfig {
  windowMs: number
  /** Separates stores sharing one RocksDB (one per partition in distributed mode). */
  prefix?: string
}

type Value = Buffer | string | null

/**
 * The one-pass event path's use of the store (one-pass/index.ts): what a lookup of `keys` and a mark of
 * `unnamed` (events without a caller id) read, then, from those values or newer ones the caller holds,
 * the lookup's answers and the writes of a mark, for the caller's own RocksDB write.
 */
export interface DedupReads {
  keys: string[]
  /** Each lookup key's original (as DedupStore.lookup) from the values of `keys`. */
  found(valueAt: (key: string, at: number) => Value): Array<string | null>
  /**
   * The writes marking the accepted events with a caller id among `accepted`, and the unnamed events
   * given to `reads` (which always pass), given their groups' values so far.
   */
  markOps(accepted: SeenEntry[], earlier: (groupKey: string) => Value): WriteOp[]
}

export interface RocksDedupStore extends DedupStore {
  reads(keys: DedupKey[], unnamed: SeenEntry[]): DedupReads
}

const textOf = (value: Buffer | string) => (typeof value === 'string' ? value : value.toString('latin1'))

export function createRocksDedupStore(rocks: Rocks, config: RocksDedupConfig): RocksDedupStore {
  const callerIds = keyPrefix('dedup', config.prefix)
  const internalIds = keyPrefix('dedupInternalIds', config.prefix)
  const spaces = [callerIds, internalIds]
  const bucketOf = (ms: number) => Math.floor(ms / config.windowMs)
  /** Per space, the key of the bucket last asked for: the events of a batch share one or two. */
  const lastBucket = new Map<string, { bucket: number; key: string }>()
  const bucketKey = (space: string, bucket: number) => {
    const last = lastBucket.get(space)
    if (last?.bucket === bucket) return last.key
    const key = space + bucket.toString(16).padStart(12, '0')
    lastBucket.set(space, { bucket, key })
    return key
  }
  const entryKey = (space: string, bucket: number, env: string, id: string) =>
    `${bucketKey(space, bucket)}\0${env}\0${id}`
  /** The bucket below which this store has deleted every mark (none yet: -1). */
  let expiredBelow = -1
  let writing = Promise.resolve()

  /** Per group key of U, the runs of internal IDs received at one time that `entries` add to it. */
  function groupsOf(entries: SeenEntry[]): Map<string, Array<{ receivedAt: number; ids: string[] }>> {
    const groups = new Map<string, Array<{ receivedAt: number; ids: string[] }>>()
    let lastKey = ''
    let last: { bucket: number; env: string; group: string } | undefined
    let run: { receivedAt: number; ids: string[] } | undefined
    for (const e of entries) {
      if (e.id !== e.internalId) continue
      const bucket = bucketOf(e.receivedAt)
      // The events of a request share their environment, millisecond and receive time, and come one
      // after another.
      if (last?.bucket !== bucket || last.env !== e.env || !e.internalId.startsWith(last.group)) {
        last = { bucket, env: e.env, group: e.internalId.slice(0, TIME_LENGTH) }
        lastKey = entryKey(internalIds, bucket, e.env, last.group)
        run = undefined
      }
      if (run?.receivedAt !== e.receivedAt) {
        run = { receivedAt: e.receivedAt, ids: [] }
        const runs = groups.get(lastKey)
        if (runs) runs.push(run)
        else groups.set(lastKey, [run])
      }
      run.ids.push(e.internalId)
    }
    return groups
  }

  /** The marks of the events with a caller id among `entries`, each under its own key. */
  function callerIdMarks(entries: SeenEntry[]): WriteOp[] {
    const ops: WriteOp[] = []
    for (const e of entries) {
      if (e.id === e.internalId) continue
      ops.push({
        type: 'put',
        key: entryKey(callerIds, bucketOf(e.receivedAt), e.env, e.id),
        value: `${e.receivedAt},${e.internalId}`,
      })
    }
    return ops
  }

  /**
   * The marks of events without a caller id, added to their groups, whose values so far `earlier`
   * gives (another batch may have marked IDs of the same millisecond).
   */
  function groupMarks(groups: ReturnType<typeof groupsOf>, earlier: (groupKey: string) => Value): WriteOp[] {
    const ops: WriteOp[] = []
    for (const [key, group] of groups) {
      const runs = group.map((r) => `${r.receivedAt},${r.ids.join(',')}`)
      const before = earlier(key)
      if (before) runs.unshift(textOf(before))
      ops.push({ type: 'put', key, value: runs.join(';') })
    }
    return ops
  }

  /** What looking up `keys` reads: per key, its bucket and the one before, and for an id of ULID form its group in U. */
  function lookupReads(keys: DedupKey[]): string[][] {
    // The event's bucket and the one before (the window reaches into it). Records from several
    // ingest nodes may arrive slightly out of time order, so near a bucket's end the next one
    // is read too. An id of ULID form may be an earlier event's internal ID: its group in U too.
    return keys.map((k) => {
      const bucket = bucketOf(k.receivedAt)
      const buckets = (bucket + 1) * config.windowMs - k.receivedAt < CLOCK_SKEW_MS ? [-1, 0, 1] : [-1, 0]
      const read = buckets.map((d) => entryKey(callerIds, bucket + d, k.env, k.id))
      if (!ULID_FORM.test(k.id)) return read
      for (const d of buckets) read.push(entryKey(internalIds, bucket + d, k.env, k.id.slice(0, TIME_LENGTH)))
      return read
    })
  }

  /** Each key's original from the values its reads found, in order. */
  function answers(
    keys: DedupKey[],
    reads: string[][],
    valueAt: (key: string, at: number) => Value,
  ): Array<string | null> {
    let at = 0
    return keys.map((key, i) => {
      let found: string | null = null
      for (const read of reads[i]) {
        const value = valueAt(read, at++)
        found ??= read.startsWith(internalIds) ? memberWithin(key, value) : markWithin(key, value)
      }
      return found
    })
  }

  async function mark(entries: SeenEntry[]): Promise<void> {
    const groups = groupsOf(entries)
    const keys = [...groups.keys()]
    const earlier = new Map<string, Value>()
    if (keys.length > 0) (await rocks.getMany(keys)).forEach((value, i) => earlier.set(keys[i], value))
    await rocks.write([...callerIdMarks(entries), ...groupMarks(groups, (key) => earlier.get(key) ?? null)])
  }

  return {
    async lookup(keys) {
      const reads = lookupReads(keys)
      const values = await rocks.getMany(reads.flat())
      return answers(keys, reads, (_, at) => values[at])
    },
    reads(keys, unnamed) {
      const reads = lookupReads(keys)
      const groups = groupsOf(unnamed)
      return {
        keys: [...reads.flat(), ...groups.keys()],
        found: (valueAt) => answers(keys, reads, valueAt),
        markOps: (accepted, earlier) => [...callerIdMarks(accepted), ...groupMarks(groups, earlier)],
      }
    },
    markSeen(entries: SeenEntry[]) {
      // One at a time: a group's value is read, then written with the new marks added.
      const done = writing.then(() => mark(entries))
      writing = done.catch(() => {})
      return done
    },
    async expire(nowMs) {
      // Once per bucket: a range delete written again for nothing is flushed with the next file, whose
      // key range then spans every mark on disk, and compaction rewrites them all.
      const end = Math.max(0, bucketOf(nowMs) - 1)
      if (end <= expiredBelow) return
      await rocks.write(
        spaces.map((space) => ({ type: 'delRange' as const, start: bucketKey(space, 0), end: bucketKey(space, end) })),
      )
      expiredBelow = end
    },
    close: async () => {},
  }

  /** The internal ID a mark holds, if within the window. */
  function markWithin(key: DedupKey, value: Value): string | null {
    if (!value) return null
    const text = textOf(value)
    const comma = text.indexOf(',')
    return within(key, text.slice(0, comma)) ? text.slice(comma + 1) : null
  }

  /**
   * The key's id, if a group holds it within the window. A group is runs of IDs received at one
   * time, `<receivedAt>,<id>,<id>…`, joined by ';': an ID is one only between two of those marks.
   */
  function memberWithin(key: DedupKey, value: Value): string | null {
    if (!value) return null
    const text = textOf(value)
    for (let at = text.indexOf(key.id); at > 0; at = text.indexOf(key.id, at + 1)) {
      const after = text.charCodeAt(at + ULID_LENGTH)
      if (text.charCodeAt(at - 1) !== 44 || !(Number.isNaN(after) || after === 44 || after === 59)) continue
      const runAt = text.lastIndexOf(';', at) + 1
      if (within(key, text.slice(runAt, text.indexOf(',', runAt)))) return key.id
    }
    return null
  }

  /** Whichever reached dedup first is the original, even if its receive time is a little later. */
  function within(key: DedupKey, firstAt: string): boolean {
    return Math.abs(key.receivedAt - Number(firstAt)) < config.windowMs
  }
}
