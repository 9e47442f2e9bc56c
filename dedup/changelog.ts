// The DedupStore of one partition of `incoming` in distributed mode: the local RocksDB store
// (dedup/rocksdb.ts, under a per-partition key prefix) backed by a compacted changelog topic.
//
// The changelog has as many partitions as `incoming` and is keyed the same way (`env\0id`), so an
// entry lands on the changelog partition with the number of the `incoming` partition whose events
// it remembers: whoever owns partition N of `incoming` restores from partition N of the changelog.
// Compaction keeps the newest entry per key; retention (≈ 2 windows, set where the topic is
// created) drops what no window can need. Record timestamps are the events' receive times, so
// Kafka's retention ages entries as the window does.
import type { Logger } from 'pino'
import type { Bus, ConsumedRecord } from '../bus/types.ts'
import type { Rocks } from '../core/rocks.ts'
import { createRocksDedupStore } from './rocksdb.ts'
import type { DedupStore, SeenEntry } from './types.ts'
import { deleteRange } from '../core/keyspaces.ts'

export interface ChangelogDedupOptions {
  rocks: Rocks
  bus: Bus
  /** The changelog topic: compacted, with the partition count of `incoming`. */
  topic: string
  partition: number
  windowMs: number
  log: Logger
  nowMs?: () => number
}

/**
 * Opens partition `partition`'s store, as when the partition is assigned to this instance: whatever
 * the local RocksDB held for it (from an earlier assignment, possibly stale since) is cleared, and
 * the state is restored from the changelog, skipping entries that expiry would already drop.
 */
export async function openChangelogDedupStore(options: ChangelogDedupOptions): Promise<DedupStore> {
  const { rocks, bus, topic, partition, windowMs } = options
  const now = options.nowMs ?? Date.now
  // The range of `p<N>/` ends before p<N>0…p<N>9: partition N's keys, no other partition's.
  const prefix = `p${partition}/`
  const local = createRocksDedupStore(rocks, { windowMs, prefix })
  await rocks.write([deleteRange('dedup', prefix), deleteRange('dedupInternalIds', prefix)])

  // What expire(now) keeps: the current bucket and the one before it.
  const horizon = (Math.floor(now() / windowMs) - 1) * windowMs
  let restored = 0
  let skipped = 0
  const started = Date.now()
  await bus.readPartition(topic, partition, async (records) => {
    const entries = records.map(entryOf).filter((e): e is SeenEntry => e !== undefined && e.receivedAt >= horizon)
    skipped += records.length - entries.length
    restored += entries.length
    await local.markSeen(entries)
  })
  options.log.info(
    { topic, partition, restored, skipped, ms: Date.now() - started },
    'dedup partition restored from its changelog',
  )

  return {
    lookup: (keys) => local.lookup(keys),
    async markSeen(entries) {
      if (entries.length === 0) return
      // Both must hold before the stage commits; if the changelog write fails, the batch is redelivered
      // and marked again, so a partition moved later never misses an id this one accepted.
      await Promise.all([
        bus.publish(
          topic,
          entries.map((e) => ({
            key: `${e.env}\0${e.id}`,
            value: Buffer.from(`${e.receivedAt},${e.internalId}`),
            timestampMs: e.receivedAt,
          })),
        ),
        local.markSeen(entries),
      ])
    },
    expire: (nowMs) => local.expire(nowMs),
    close: () => local.close(),
  }
}

function entryOf(record: ConsumedRecord): SeenEntry | undefined {
  const separator = record.key.indexOf('\0')
  const value = record.value.toString('utf8')
  const comma = value.indexOf(',')
  if (separator < 0 || comma < 0) return undefined
  return {
    env: record.key.slice(0, separator),
    id: record.key.slice(separator + 1),
    receivedAt: Number(value.slice(0, comma)),
    internalId: value.slice(comma + 1),
  }
}
