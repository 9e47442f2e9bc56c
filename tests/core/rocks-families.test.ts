// Column families (core/rocks.ts, core/keyspaces.ts FAMILIES): each space that has one is stored
// in it, a batch that spans families is written whole, and a data dir written before the families
// is moved into them at open.
import t from 'tap'
import { join } from 'node:path'
import RocksDB from 'rocksdb-native'
import { FAMILIES, KEY_SPACES, keyPrefix } from '../../core/keyspaces.ts'
import { openRocks } from '../../core/rocks.ts'
import { removeDir, tempDir } from '../helpers/server.ts'

interface RawDb {
  columnFamily(name: string): RawDb
  ready(): Promise<void>
  put(key: string, value: string): Promise<void>
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
  const rocks = await openRocks(path)
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

t.test('a data dir written before the families opens with its keys moved into them, each key once', async (t) => {
  const dir = await tempDir()
  t.teardown(() => removeDir(dir))
  const path = join(dir, 'db')
  const old = new Raw(path) // the default family only, as every data dir was before
  await old.ready()
  const keys = Object.entries(KEY_SPACES).map(([name, s]) => [name, `${s.prefix}k1`, s.family ?? 'default'] as const)
  for (const [name, key] of keys) await old.put(key, name)
  for (let i = 0; i < 2_500; i++) await old.put(keyPrefix('events', `e${String(i).padStart(5, '0')}`), String(i))
  await old.close()

  const lines: Array<Record<string, unknown>> = []
  const rocks = await openRocks(path, undefined, { info: (fields: Record<string, unknown>) => lines.push(fields) })
  for (const [name, key] of keys) t.equal((await rocks.get(key))?.toString(), name, `${name} reads as before`)
  let events = 0
  for await (const _ of rocks.scan({ gte: keyPrefix('events'), lt: keyPrefix('eventsById') })) events++
  t.equal(events, 2_501, 'every event, over several chunks of the move')
  t.same(
    lines.map((l) => [l.space, l.keys]).sort(),
    [
      ['dedup', 1],
      ['dedupInternalIds', 1],
      ['events', 2_501],
      ['eventsByEnv', 1],
      ['eventsByEnvName', 1],
      ['eventsById', 1],
      ['eventsByName', 1],
      ['logBatches', 1],
    ],
    'one line per space moved',
  )
  await rocks.close()
  for (const [name, key, family] of keys) {
    t.same(await whereIs(path, key), [family], `${name}: in ${family} only`)
  }
  const again: unknown[] = []
  await (await openRocks(path, undefined, { info: (fields: unknown) => again.push(fields) })).close()
  t.same(again, [], 'nothing left to move at the next open')
})
