import t from 'tap'
import { join } from 'node:path'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createRocksRunStore } from '../../store/runs-rocksdb.ts'
import { tempDir, removeDir } from '../helpers/server.ts'
import { runStoreSuite } from './run-store-suite.ts'

runStoreSuite(t, 'RocksDB RunStore', async () => {
  const dir = await tempDir()
  const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  return {
    store: createRocksRunStore(rocks),
    close: async () => {
      await rocks.close()
      await removeDir(dir)
    },
  }
})
