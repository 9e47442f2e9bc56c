import t from 'tap'
import { join } from 'node:path'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createRocksEventStore } from '../../store/rocksdb.ts'
import { createRocksDedupStore } from '../../dedup/rocksdb.ts'
import { createRocksControlStore } from '../../control/rocksdb.ts'
import { tempDir, removeDir } from '../helpers/server.ts'
import { eventStoreSuite } from './event-store-suite.ts'
import { dedupStoreSuite } from './dedup-store-suite.ts'
import { controlStoreSuite } from './control-store-suite.ts'

async function rocksIn() {
  const dir = await tempDir()
  const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  return {
    dir,
    rocks,
    close: async () => {
      await rocks.close()
      await removeDir(dir)
    },
  }
}

eventStoreSuite(t, 'RocksDB EventStore', async () => {
  const r = await rocksIn()
  return { store: createRocksEventStore(r.rocks), close: r.close }
})

dedupStoreSuite(t, 'RocksDB DedupStore', async (windowMs) => {
  const r = await rocksIn()
  return { store: createRocksDedupStore(r.rocks, { windowMs }), close: r.close }
})

controlStoreSuite(t, 'RocksDB ControlStore', async () => {
  const dir = await tempDir()
  let rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  const store = await createRocksControlStore(rocks)
  return {
    store,
    async reopen() {
      await rocks.close()
      rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
      return createRocksControlStore(rocks)
    },
    async close() {
      await rocks.close()
      await removeDir(dir)
    },
  }
})
