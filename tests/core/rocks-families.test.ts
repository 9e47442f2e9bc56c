// Column families (core/rocks.ts, core/keyspaces.ts FAMILIES): each space that has one is stored
// in it, and a batch that spans families is written whole.
import t from 'tap'
import { join } from 'node:path'
import RocksDB from 'rocksdb-native'
import { FAMILIES, keyPrefix } from '../../core/keyspaces.ts'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { removeDir, tempDir } from '../helpers/server.ts'

interface RawDb {
  columnFamily(name: string): RawDb
  ready(): Promise<void>
  get(key: string): Promise<Buffer | null>
  close(): Promise<void>
}
const Raw = RocksDB as unknown as new (path: string) => RawDb

/** What each family of a closed data dir holds under `key`, read with the binding itself. */
async function whereIs(path: string, key: string): Promise<string[]> {
  const db = new Raw(path)
  const families = Object.keys(FAMILIES).map((name) => [name, db.columnFamily(name)] as const)
  await db.ready()
  const found: string[] = []
  for (const [name, family] of [['default', db] as const, ...families])
    if ((await family.get(key)) !== null) found.push(name)
  await db.close()
  return found
}

t.test('a space with a family is stored in it; one batch spans families; a scan reads its family', async (t) => {
  const dir = await tempDir()
  t.teardown(() => removeDir(dir))
  const path = join(dir, 'db')
  const rocks = await openRocks(path, rocksOptionsOf(DEFAULTS))
  const event = keyPrefix('events', '01J00000000000000000000000')
  const index = keyPrefix('eventsByName', '0005order01J00000000000000000000000')
  const offset = keyPrefix('logOffsets', 'store\0events\x000')
  await rocks.write([
    { type: 'put', key: event, value: '{"name":"order"}' },
    { type: 'put', key: index, value: '' },
    { type: 'put', key: offset, value: '7' },
  ])
  t.same(
    (await rocks.getMany([event, offset, index])).map((v) => v?.toString()),
    ['{"name":"order"}', '7', ''],
  )
  const scanned = []
  for await (const { key } of rocks.scan({ gte: keyPrefix('events'), lt: keyPrefix('eventsById') })) scanned.push(key)
  t.same(scanned, [event], 'the events family holds the event alone')
  await rocks.close()
  t.same(await whereIs(path, event), ['events'])
  t.same(await whereIs(path, index), ['eventsByName'])
  t.same(await whereIs(path, offset), ['default'])
})
