// The local log's write health, which /readyz follows (issue #35 item 4): any write the data dir
// refuses, not only a full disk (tests/ops/disk-full.test.ts), makes the log unhealthy with a reason
// that names no path, and the log finds out by itself that writes succeed again. Faults are injected
// over a real RocksDB: an I/O error (EIO), a read-only file system (EROFS), a full disk (ENOSPC). A
// failed WAL sync fails its writes the same way (tests/core/wal-sync.test.ts).
import t from 'tap'
import { join } from 'node:path'
import pino from 'pino'
import { openRocks, type Rocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createLocalBus } from '../../bus/local.ts'
import { tempDir, removeDir } from '../helpers/server.ts'

const dir = await tempDir()
const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
let fault: NodeJS.ErrnoException | null = null
const faulty: Rocks = {
  ...rocks,
  async write(ops) {
    if (fault) throw fault
    return rocks.write(ops)
  },
}
const bus = createLocalBus(faulty, pino({ level: 'silent' }), { maxBatchRecords: 100, retentionCheckMs: 60_000 })
t.teardown(async () => {
  await bus.close()
  await rocks.close()
  await removeDir(dir)
})
await bus.ensureTopics({ t: { partitions: 1 } })

const errno = (code: string, message: string) =>
  Object.assign(new Error(`${message}, write '${dir}/db/000012.log'`), { code })

for (const [code, message, reason] of [
  ['EIO', 'EIO: i/o error', 'cannot write to the data dir'],
  ['EROFS', 'EROFS: read-only file system', 'cannot write to the data dir'],
  ['ENOSPC', 'ENOSPC: no space left on device', "cannot write: the data dir's disk is full"],
] as const)
  t.test(`${code}: a refused write makes the log unhealthy, a later success healthy`, async (t) => {
    t.equal(await bus.writeHealth(), undefined, 'healthy before')
    fault = errno(code, message)
    await t.rejects(bus.publish('t', [{ key: 'k', value: 'lost' }]), 'the publish fails: nothing acknowledged')
    const unhealthy = await bus.writeHealth()
    t.equal(unhealthy, reason, 'the reason')
    t.notMatch(unhealthy, dir, 'names no path')
    t.equal(await bus.writeHealth(), reason, 'still unhealthy while writes fail (its own retry fails too)')
    fault = null
    t.equal(await bus.writeHealth(), undefined, 'healthy again once a write succeeds, with no publish to show it')
    await bus.publish('t', [{ key: 'k', value: 'kept' }])
  })
