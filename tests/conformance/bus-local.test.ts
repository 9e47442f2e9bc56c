import t from 'tap'
import { join } from 'node:path'
import pino from 'pino'
import { openRocks, type Rocks } from '../../core/rocks.ts'
import { createLocalBus } from '../../bus/local.ts'
import type { Bus } from '../../bus/types.ts'
import { tempDir, removeDir } from '../helpers/server.ts'
import { busSuite } from './bus-suite.ts'

let n = 0
const log = pino({ level: 'silent' })
const config = { maxBatchRecords: 100, retentionCheckMs: 60_000 }

busSuite(t, 'local RocksDB bus', async () => {
  const dir = await tempDir()
  let rocks: Rocks = await openRocks(join(dir, 'db'))
  let bus: Bus = createLocalBus(rocks, log, config)
  return {
    bus,
    async reopen() {
      await bus.close()
      await rocks.close()
      rocks = await openRocks(join(dir, 'db'))
      bus = createLocalBus(rocks, log, config)
      return bus
    },
    async close() {
      await bus.close()
      await rocks.close()
      await removeDir(dir)
    },
  }
}, () => `t${process.pid}-${n++}`)
