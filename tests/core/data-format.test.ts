// One data format per data dir (core/data-format.ts): a new data dir gets this build's, and opens
// again; one of another format, or with data but none (made before data formats), is refused at
// open with a message naming both formats, and is left as it was.
import t from 'tap'
import { join } from 'node:path'
import RocksDB from 'rocksdb-native'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { DATA_FORMAT, READABLE_FORMATS } from '../../core/data-format.ts'
import { FAMILIES, keyPrefix } from '../../core/keyspaces.ts'
import { openRocks } from '../../core/rocks.ts'
import { removeDir, tempDir } from '../helpers/server.ts'

interface RawDb {
  columnFamily(name: string): RawDb
  ready(): Promise<void>
  put(key: string, value: string): Promise<void>
  iterator(range: object): AsyncIterable<{ key: Buffer; value: Buffer }>
  close(): Promise<void>
}
const Raw = RocksDB as unknown as new (path: string) => RawDb
const memory = rocksOptionsOf(DEFAULTS)

/** A closed data dir read or written with the binding itself, in every family. */
async function raw<T>(path: string, use: (family: (name: string) => RawDb) => Promise<T>): Promise<T> {
  const db = new Raw(path)
  const families = new Map<string, RawDb>([['default', db]])
  for (const name of Object.keys(FAMILIES)) families.set(name, db.columnFamily(name))
  await db.ready()
  try {
    return await use((name) => families.get(name)!)
  } finally {
    await db.close()
  }
}

/** Every `family key=value` of a closed data dir. */
const contents = (path: string) =>
  raw(path, async (family) => {
    const found: string[] = []
    for (const name of ['default', ...Object.keys(FAMILIES)])
      for await (const { key, value } of family(name).iterator({})) found.push(`${name} ${key}=${value}`)
    return found
  })

/** What a build before data formats left: events and index entries in their families, its own format keys. */
const beforeFormats = (path: string) =>
  raw(path, async (family) => {
    await family('events').put(keyPrefix('events', '01J00000000000000000000000'), '{"name":"order"}')
    await family('eventsByName').put(keyPrefix('eventsByName', '0005order01J00000000000000000000000'), '1')
    await family('default').put('Vevents', '3')
    await family('default').put('Vlog', '2')
  })

const refusal = (found: string) =>
  new RegExp(
    `^dataDir \\(--data-dir / SLUICE_DATA_DIR\\): .*/db holds data format ${found}; ` +
      `this build reads data format ${READABLE_FORMATS} only\\. Start with an empty data dir`,
  )

t.test("a new data dir gets this build's data format and opens again with what it holds", async (t) => {
  const dir = await tempDir()
  t.teardown(() => removeDir(dir))
  const path = join(dir, 'db')
  const lines: Array<Record<string, unknown>> = []
  const log = { info: (fields: Record<string, unknown>) => lines.push(fields) }
  const rocks = await openRocks(path, memory, log)
  await rocks.write([{ type: 'put', key: keyPrefix('control', 'key\0k1'), value: '{}' }])
  await rocks.close()
  t.same(
    await contents(path),
    ['default Ckey\0k1={}', `default V=${DATA_FORMAT}`],
    'one format key, in the default family',
  )
  t.same(lines, [{ path, dataFormat: DATA_FORMAT }], 'the new data dir is logged')

  const again = await openRocks(path, memory, log)
  t.equal((await again.get(keyPrefix('control', 'key\0k1')))?.toString(), '{}')
  await again.close()
  t.equal(lines.length, 1, 'reopened, not new')
})

t.test('a database left empty (a first open cut short before the format was written) gets the format', async (t) => {
  const dir = await tempDir()
  t.teardown(() => removeDir(dir))
  const path = join(dir, 'db')
  await raw(path, async () => {})
  await (await openRocks(path, memory)).close()
  t.same(await contents(path), [`default V=${DATA_FORMAT}`])
})

for (const older of ['1', '2']) {
  t.test(
    `a data dir of format ${older}, which format ${DATA_FORMAT} extends, opens with what it holds and is stamped ${DATA_FORMAT}`,
    async (t) => {
      t.equal(DATA_FORMAT, 3, 'when the format is raised again, decide which formats it still reads')
      const dir = await tempDir()
      t.teardown(() => removeDir(dir))
      const path = join(dir, 'db')
      await raw(path, async (family) => {
        await family('default').put(keyPrefix('dataFormat'), older)
        await family('events').put(keyPrefix('events', '01J00000000000000000000000'), '{"name":"order"}')
      })
      const rocks = await openRocks(path, memory)
      t.equal((await rocks.get(keyPrefix('events', '01J00000000000000000000000')))?.toString(), '{"name":"order"}')
      await rocks.close()
      t.same(
        await contents(path),
        [`default V=${DATA_FORMAT}`, 'events E01J00000000000000000000000={"name":"order"}'],
        'stamped with this format (an older build refuses it from now on); the events as they were',
      )
    },
  )
}

t.test('a data dir of another data format is refused, naming both, and left as it was', async (t) => {
  const dir = await tempDir()
  t.teardown(() => removeDir(dir))
  const path = join(dir, 'db')
  const rocks = await openRocks(path, memory)
  await rocks.write([
    { type: 'put', key: keyPrefix('dataFormat'), value: String(DATA_FORMAT + 1) },
    { type: 'put', key: keyPrefix('events', '01J00000000000000000000000'), value: '{"name":"order"}' },
  ])
  await rocks.close()
  const before = await contents(path)
  await t.rejects(openRocks(path, memory), { code: 'CONFIG_INVALID', message: refusal(String(DATA_FORMAT + 1)) })
  t.same(await contents(path), before, 'nothing written (the binding could open it again: the lock was released)')
})

t.test('a data dir with data but no data format (made before them) is refused, every time', async (t) => {
  const dir = await tempDir()
  t.teardown(() => removeDir(dir))
  const path = join(dir, 'db')
  await beforeFormats(path)
  const before = await contents(path)
  t.equal(before.length, 4)
  const refused = { code: 'CONFIG_INVALID', message: refusal('none \\(it was made before data dirs had one\\)') }
  await t.rejects(openRocks(path, memory), refused)
  await t.rejects(openRocks(path, memory), refused, 'not stamped by the first refusal')
  t.same(await contents(path), before, 'nothing written, nothing converted')
  await t.rejects(openRocks(path, memory), {
    message: /not carried over; a distributed role restores all it keeps there from the Kafka changelogs, so deleting/,
  })
})
