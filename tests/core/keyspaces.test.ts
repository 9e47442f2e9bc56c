// The registry of RocksDB key spaces: no space inside another, bounds that hold exactly a space,
// and no code that makes a key prefix or a scan / range-delete bound of its own.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { KEY_SPACES, deleteRange, keyRange, type KeySpaceName } from '../../core/keyspaces.ts'
import { ROOT } from '../helpers/server.ts'

const spaces = Object.entries(KEY_SPACES) as Array<[KeySpaceName, (typeof KEY_SPACES)[KeySpaceName]]>

t.test('no key space is a prefix of another, so no scan or range delete of one reaches into another', async (t) => {
  const overlaps: string[] = []
  for (const [a, sa] of spaces) {
    for (const [b, sb] of spaces) {
      if (a !== b && sb.prefix.startsWith(sa.prefix)) overlaps.push(`${a} (${sa.prefix}) holds ${b} (${sb.prefix})`)
    }
  }
  t.same(overlaps, [])
  t.same(
    spaces.filter(([, s]) => s.prefix === '' || s.owner === '' || s.holds === '').map(([name]) => name),
    [],
    'each has a prefix, an owner and what it holds',
  )
})

t.test("a space in a column family of its own has a one-letter prefix no other space's key starts with", async (t) => {
  for (const [name, s] of spaces.filter(([, s]) => s.family !== undefined)) {
    t.equal(s.prefix.length, 1, `${name}: a key's first character picks its family`)
    const others = spaces
      .filter(([other, o]) => other !== name && o.prefix.startsWith(s.prefix))
      .map(([other]) => other)
    t.same(others, [], `${name}: no other space starts with ${s.prefix}`)
  }
})

t.test('the bounds of a space, or of a part of it, hold exactly the keys that start with it', async (t) => {
  t.same(keyRange('control'), { gte: 'C', lt: 'D' })
  t.same(keyRange('webhookRequests', 'wh_1\0'), { gte: 'Wwh_1\0', lt: 'Wwh_1\u0001' })
  t.same(deleteRange('dedup', 'p3/'), { type: 'delRange', start: 'Dp3/', end: 'Dp30' }, 'partition 3, not 30–39')
  // Keys are compared as UTF-8 bytes: a character beyond the BMP is raised as one code point.
  const astral = keyRange('eventsByName', '0002\u{1F7FF}')
  t.equal(astral.lt, 'N0002\u{1F800}')
  t.ok(Buffer.compare(Buffer.from(astral.gte + 'Z'), Buffer.from(astral.lt)) < 0, 'keys of the prefix are below lt')
  t.equal(keyRange('eventsByName', '0001\uD7FF').lt, 'N0001\uE000', 'no lone surrogate')
  for (const [name, { prefix }] of spaces) {
    const { gte, lt } = keyRange(name, 'x\0')
    const inRange = (key: string) => gte <= key && key < lt
    const label = (key: string) => `${name}: ${JSON.stringify(key)}`
    for (const key of [`${prefix}x\0`, `${prefix}x\0\uffff`, `${prefix}x\0zzz`]) t.ok(inRange(key), label(key))
    for (const key of [`${prefix}x`, `${prefix}x\u0001`, `${prefix}y`]) t.notOk(inRange(key), 'not ' + label(key))
  }
})

const SKIPPED = ['node_modules', 'tests', 'dist', '.git', 'dashboard']

/** Source files of the app (not tests). */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return SKIPPED.includes(entry.name) ? [] : sources(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

t.test('keys and bounds come from the registry: no file using RocksDB makes its own prefix or bound', async (t) => {
  const handMade = [
    /\b(gte|gt|lt|lte|start|end):\s*['"`]/, // a literal scan or range-delete bound: { gte: 'C', lt: 'D' }
    /\bkey:\s*['"`][A-Z]/, // a literal key prefix: { key: 'T' + topic }
    /['"][A-Z][a-z]?['"]\s*\+/, // 'E' + id, 'Rr' + id
    /`[A-Z][a-z]?\$\{/, // `F${scope}\0`
  ]
  const found: string[] = []
  for (const path of sources(ROOT)) {
    const file = relative(ROOT, path)
    const text = readFileSync(path, 'utf8')
    if (file === 'core/keyspaces.ts' || !/core\/rocks\.ts'/.test(text)) continue
    text.split('\n').forEach((line, i) => {
      if (handMade.some((pattern) => pattern.test(line))) found.push(`${file}:${i + 1}: ${line.trim()}`)
    })
  }
  t.same(found, [], 'every key starts with keyPrefix(space); every bound is keyRange/deleteRange')
})

t.test('each space is used by the file the registry names as its owner', async (t) => {
  for (const [name, { owner }] of spaces) {
    // The event store keeps its key layout beside it.
    const layout = name.startsWith('events') ? readFileSync(join(ROOT, 'store/rocksdb-index.ts'), 'utf8') : ''
    const text = readFileSync(join(ROOT, owner), 'utf8') + layout
    t.ok(text.includes(`'${name}'`), `${owner} uses ${name}`)
  }
})
