// The local log on a RocksDB of its own, for the tests of what only it has (bus-local*.test.ts).
import { join } from 'node:path'
import pino from 'pino'
import { openRocks, type Rocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createLocalBus } from '../../bus/local.ts'
import type { Bus } from '../../bus/types.ts'
import { keyRange } from '../../core/keyspaces.ts'
import { tempDir, removeDir } from '../helpers/server.ts'

const log = pino({ level: 'silent' })
const config = { maxBatchRecords: 100, retentionCheckMs: 60_000 }

/**
 * A local log on a fresh data dir. `spy`, when given, wraps the RocksDB the log writes and reads
 * through (to count or see its writes); `rocks` stays the one underneath.
 */
export async function openLocal(
  options: Partial<typeof config> & { commitIntervalMs?: number } = {},
  spy: (rocks: Rocks) => Rocks = (rocks) => rocks,
) {
  const dir = await tempDir()
  let rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  let bus = createLocalBus(spy(rocks), log, { ...config, ...options })
  return {
    get bus() {
      return bus
    },
    get rocks() {
      return rocks
    },
    async reopen() {
      await bus.close()
      await rocks.close()
      rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
      bus = createLocalBus(spy(rocks), log, { ...config, ...options })
      return bus
    },
    async close() {
      await bus.close()
      await rocks.close()
      await removeDir(dir)
    },
  }
}

export async function countLogValues(rocks: Rocks, topic: string): Promise<number> {
  let n = 0
  for await (const _ of rocks.scan(keyRange('logBatches', `${topic}\0`))) n++
  return n
}

/** Subscribes `group` to `topic`, pushing each record's value, as text, to `into`. */
export function consumeInto(bus: Bus, group: string, topic: string, into: string[]) {
  return bus.subscribe({
    group,
    topics: [topic],
    handler: async (b) => void into.push(...b.records.map((r) => r.value.toString())),
  })
}
