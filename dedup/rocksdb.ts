// DedupStore on RocksDB. A key first seen at t lives in bucket floor(t / window):
// `D<prefix><bucket hex>\0<env>\0<id>` → `<receivedAt>,<internalId>`, or, for an event without a
// caller id (its internal ID is its dedup key), the same under `U` (core/keyspaces.ts: a family
// without bloom filters, which only a caller id of ULID form reads). A lookup reads the event's
// bucket and the one before (two point reads, three near a bucket's end, twice that for an id of
// ULID form, batched over the whole batch) and compares times exactly; expiry range-deletes every
// bucket older than the previous one.
import type { Rocks } from '../core/rocks.ts'
import type { DedupKey, DedupStore, SeenEntry } from './types.ts'
import { keyPrefix } from '../core/keyspaces.ts'

/** How far apart the receive times of two ingest nodes may be for the same id. */
const CLOCK_SKEW_MS = 60_000
/** The form of an internal ID (core/ids.ts): only such an id can equal an earlier event's. */
const ULID_FORM = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/

export interface RocksDedupConfig {
  windowMs: number /** Separates stores sharing one RocksDB (one per partition in distributed mode). */
  prefix?: string
}

export function createRocksDedupStore(rocks: Rocks, config: RocksDedupConfig): DedupStore {
  const spaces = [keyPrefix('dedup', config.prefix), keyPrefix('dedupInternalIds', config.prefix)]
  const callerIdSpace = spaces.slice(0, 1)
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

  return {
    async lookup(keys) {
      // The event's bucket and the one before (the window reaches into it). Records from several
      // ingest nodes may arrive slightly out of time order, so near a bucket's end the next one
      // is read too. Point reads cost ~3 µs each here: most events need only two.
      const reads = keys.map((k) => {
        const bucket = bucketOf(k.receivedAt)
        const buckets = (bucket + 1) * config.windowMs - k.receivedAt < CLOCK_SKEW_MS ? [-1, 0, 1] : [-1, 0]
        const read = ULID_FORM.test(k.id) ? spaces : callerIdSpace
        return read.flatMap((space) => buckets.map((d) => entryKey(space, bucket + d, k.env, k.id)))
      })
      const values = await rocks.getMany(reads.flat())
      let at = 0
      return keys.map((key, i) => {
        let found: string | null = null
        for (let j = 0; j < reads[i].length; j++, at++) found ??= firstWithin(key, values[at])
        return found
      })
    },
    async markSeen(entries: SeenEntry[]) {
      await rocks.write(
        entries.map((e) => ({
          type: 'put',
          key: entryKey(spaces[e.id === e.internalId ? 1 : 0], bucketOf(e.receivedAt), e.env, e.id),
          value: `${e.receivedAt},${e.internalId}`,
        })),
      )
    },
    async expire(nowMs) {
      // Once per bucket: a range delete written again for nothing would still be flushed with the
      // next file, stretching its key range from the space's start to the newest mark, so every
      // flush of marks overlapped, and compaction rewrote, all the marks on disk (140 MiB a minute
      // in the soak).
      const end = Math.max(0, bucketOf(nowMs) - 1)
      if (end <= expiredBelow) return
      await rocks.write(
        spaces.map((space) => ({ type: 'delRange' as const, start: bucketKey(space, 0), end: bucketKey(space, end) })),
      )
      expiredBelow = end
    },
    close: async () => {},
  }

  function firstWithin(key: DedupKey, value: Buffer | null): string | null {
    if (!value) return null
    const text = value.toString()
    const comma = text.indexOf(',')
    const firstAt = Number(text.slice(0, comma))
    // Whichever reached dedup first is the original, even if its receive time is a little later.
    return Math.abs(key.receivedAt - firstAt) < config.windowMs ? text.slice(comma + 1) : null
  }
}
