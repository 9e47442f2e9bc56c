// Retention per environment and erasure on the embedded RocksDB store.
import t from 'tap'
import { join } from 'node:path'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { openRocks } from '../../core/rocks.ts'
import { createRocksEventStore } from '../../store/rocksdb.ts'
import { createRocksRunStore } from '../../store/runs-rocksdb.ts'
import { createRocksRequestStore } from '../../store/requests-rocksdb.ts'
import { createRocksErasure } from '../../store/rocksdb-erasure.ts'
import { expireEmbedded } from '../../store/rocksdb-expire.ts'
import { removeDir, tempDir } from '../helpers/server.ts'
import { lifecycleSuite } from './lifecycle-suite.ts'

lifecycleSuite(t, 'RocksDB', async () => {
  const dir = await tempDir()
  const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  return {
    events: createRocksEventStore(rocks),
    runs: createRocksRunStore(rocks),
    requests: createRocksRequestStore(rocks),
    retention: { expire: (plan, options) => expireEmbedded(rocks, plan, options) },
    erasure: createRocksErasure(rocks),
    settle: async () => {},
    close: async () => {
      await rocks.close()
      await removeDir(dir)
    },
  }
})
