// DedupStore on RocksDB. A key first seen at t lives in bucket floor(t / window):
// `D<prefix><bucket hex>\0<env>\0<id>` → `<receivedAt>,<internalId>`. A lookup reads the
// event's bucket and the one before (two point reads, three near a bucket's end, batched over
// the whole batch) and compares times exactly; expiry range-deletes every bucket older than
// the previous one.
import type { Rocks } from '../core/rocks.ts'
import type { DedupKey, DedupStore, SeenEntry } from './types.ts'
import { keyPrefix } from '../core/keyspaces.ts'

/** How far apart the receive times of two ingest nodes may be for the same id. */
const CLOCK_SKEW_MS = 60_000

export interface RocksDedupConfig {
  windowMs: number /** Separates stores sharing one RocksDB (one per partition in distributed mode). */
  prefix?: string
}

export function createRocksDedupStore(rocks: Rocks, config: RocksDedupConfig): DedupStore {
  const prefix = keyPrefix('dedup', config.prefix)
  const bucketOf = (ms: number) => Math.floor(ms / config.windowMs)
  const bucketKey = (bucket: number) => prefix + bucket.toString(16).padStart(12, '0')
  const entryKey = (bucket: number, env: string, id: string) => `${bucketKey(bucket)}\0${env}\0${id}`

  return {
    async lookup(keys) {
      // The event's bucket and the one before (the window reaches into it). Records from several
      // ingest nodes may arrive slightly out of time order, so near a bucket's end the next one
      // is read too. Point reads cost ~3 µs each here: most events need only two.
      const offsets = keys.map((k) =>
        (bucketOf(k.receivedAt) + 1) * config.windowMs - k.receivedAt < CLOCK_SKEW_MS ? [-1, 0, 1] : [-1, 0],
      )
      const reads = keys.flatMap((k, i) => offsets[i].map((d) => entryKey(bucketOf(k.receivedAt) + d, k.env, k.id)))
      const values = await rocks.getMany(reads)
      let at = 0
      return keys.map((key, i) => {
        let found: string | null = null
        for (let j = 0; j < offsets[i].length; j++, at++) found ??= firstWithin(key, values[at])
        return found
      })
    },
    async markSeen(entries: SeenEntry[]) {
      await rocks.write(
        entries.map((e) => ({
          type: 'put',
          key: entryKey(bucketOf(e.receivedAt), e.env, e.id),
          value: `${e.receivedAt},${e.internalId}`,
        })),
      )
    },
    async expire(nowMs) {
      await rocks.write([{ type: 'delRange', start: bucketKey(0), end: bucketKey(Math.max(0, bucketOf(nowMs) - 1)) }])
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
