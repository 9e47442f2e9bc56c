// Internal IDs: valid ULIDs carrying the time, unique, and monotonic within a millisecond.
import t from 'tap'
import { isUlid, newUlid, seededUlids, ulidTime, newIdSeed } from '../../core/ids.ts'

t.test('ULIDs are valid, carry their time, and sort in creation order', async (t) => {
  const now = Date.now()
  const ids = Array.from({ length: 100_000 }, (_, i) => newUlid(now + Math.floor(i / 1000)))
  t.ok(ids.every(isUlid), 'all valid')
  t.equal(ulidTime(ids[0]), now)
  t.equal(ulidTime(ids[99_999]), now + 99)
  t.equal(new Set(ids).size, ids.length, 'unique')
  t.same([...ids].sort(), ids, 'monotonic, also within one millisecond')
})

t.test('a clock that goes back still yields increasing IDs', async (t) => {
  const a = newUlid(Date.now() + 10_000)
  const b = newUlid(Date.now())
  t.ok(b > a)
})

t.test('seeded IDs are deterministic and distinct', async (t) => {
  const seed = newIdSeed()
  t.same(seededUlids(seed, 3), seededUlids(seed, 3))
  t.equal(new Set(seededUlids(seed, 1000)).size, 1000)
})
