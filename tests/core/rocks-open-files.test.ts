// At most SLUICE_ROCKSDB_MAX_OPEN_FILES files open at once (core/rocks.ts): without a bound every
// file of the store stays open, with its descriptor and table reader, and both grow with the data.
// A family without a bloom filter keeps each open file's index block in its table reader, so its
// block cache holds only what reads bring in. A file closed to keep within the bound is opened
// again when a read needs it. RocksDB splits the open files' cache into 64 shards of at least one
// file each: at the smallest bound (20), up to 64 are open.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { readdirSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { keyPrefix } from '../../core/keyspaces.ts'
import { registry } from '../../core/metrics.ts'
import { openRocks } from '../../core/rocks.ts'
import { removeDir, tempDir } from '../helpers/server.ts'

/** This process's open descriptors of files in `dir` ending in `.sst`. */
function openTables(dir: string): number {
  let n = 0
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      if (target.startsWith(dir) && target.endsWith('.sst')) n++
    } catch {} // closed while we looked
  }
  return n
}

t.test('files beyond maxOpenFiles are closed, and read again when needed', async (t) => {
  const dir = await tempDir()
  t.teardown(() => removeDir(dir))
  const path = join(dir, 'db')
  // 1 MiB memtables: the event store's family flushes a file every ~10 values of 100 KiB. Its keys
  // follow time, so files move down the levels whole and stay many.
  const rocks = await openRocks(path, { writeBufferMb: 1, writeBuffers: 2, maxOpenFiles: 20, durability: 'off' })
  t.teardown(() => rocks.close())
  const values = new Map<string, Buffer>()
  for (let i = 0; i < 1500; i++) {
    const key = keyPrefix('events', `01J${String(i).padStart(23, '0')}`)
    const value = randomBytes(100 * 1024) // incompressible: each file holds what was written
    values.set(key, value)
    await rocks.write([{ type: 'put', key, value }])
  }
  await sleep(1000) // the last flushes and compactions
  const onDisk = readdirSync(path).filter((f) => f.endsWith('.sst')).length
  t.ok(onDisk > 100, `${onDisk} files on disk`)
  t.ok(openTables(path) <= 64, `${openTables(path)} of them open`)
  const memory = async (kind: string) =>
    (await registry.getSingleMetric('sluice_rocksdb_memory_bytes')!.get()).values.find(
      (v) => v.labels.kind === kind && v.labels.family === 'events',
    )!.value
  const readers = await memory('table_readers')
  const cache = await memory('block_cache')
  t.ok(readers > 0, `the open files' readers hold ${readers} bytes`)
  t.ok(cache < 16 * 1024, `nothing read, the cache holds ${cache} bytes`)
  let same = 0
  for (const [key, value] of values) if ((await rocks.get(key))?.equals(value)) same++
  t.equal(same, values.size, 'every value reads back, from files opened again')
  t.ok(openTables(path) <= 64, `${openTables(path)} open after reading them all`)
})
