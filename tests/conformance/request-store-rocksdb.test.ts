import t from 'tap'
import { join } from 'node:path'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createRocksRequestStore } from '../../store/requests-rocksdb.ts'
import { tempDir, removeDir } from '../helpers/server.ts'
import { requestStoreSuite } from './request-store-suite.ts'

requestStoreSuite(t, 'RocksDB WebhookRequestStore', async () => {
  const dir = await tempDir()
  const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  return {
    store: createRocksRequestStore(rocks),
    close: async () => {
      await rocks.close()
      await removeDir(dir)
    },
  }
})
