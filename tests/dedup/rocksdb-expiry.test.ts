// Dedup on RocksDB: expiry writes its range deletes once per bucket: one written again for nothing
// is flushed with the next file of marks and stretches its key range over every mark on disk, so
// compaction rewrote them all at each expiry tick (every minute).
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { openRocks, type Rocks, type WriteOp } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createRocksDedupStore } from '../../dedup/rocksdb.ts'
import { tempDir, removeDir } from '../helpers/server.ts'

/** A RocksDB in a temp dir, closed and removed after the test. */
async function openTempRocks(t: Test): Promise<Rocks> {
  const dir = await tempDir()
  const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  t.teardown(async () => {
    await rocks.close()
    await removeDir(dir)
  })
  return rocks
}

t.test('expiry range-deletes old buckets once per bucket, and again when the next one ends', async (t) => {
  const rocks = await openTempRocks(t)
  const rangeDeletes: WriteOp[][] = []
  const counted: Rocks = {
    ...rocks,
    write: (ops) => {
      if (ops.some((op) => op.type === 'delRange')) rangeDeletes.push(ops)
      return rocks.write(ops)
    },
  }
  const store = createRocksDedupStore(counted, { windowMs: 1000 })
  const mark = (id: string, receivedAt: number) =>
    store.markSeen([{ env: 'e', id, receivedAt, internalId: id.toUpperCase() }])
  await mark('old', 10_000)
  await mark('kept', 11_500)
  await store.expire(12_100)
  t.equal(rangeDeletes.length, 1, 'the first expiry deletes what is older than the previous bucket')
  t.same(await store.lookup([{ env: 'e', id: 'old', receivedAt: 10_100 }]), [null], 'old: gone')
  await store.expire(12_500)
  await store.expire(12_900)
  t.equal(rangeDeletes.length, 1, 'nothing more to delete within the same bucket: nothing written')
  t.same(await store.lookup([{ env: 'e', id: 'kept', receivedAt: 12_400 }]), ['KEPT'], 'the previous bucket is kept')
  await store.expire(13_000)
  t.equal(rangeDeletes.length, 2, 'the next bucket: the one before the previous goes')
  t.same(await store.lookup([{ env: 'e', id: 'kept', receivedAt: 11_600 }]), [null], 'kept: now gone')
})
