// Group commit: small concurrent writes share one INSERT, each caller learns its own INSERT's
// fate, big writes go at once, and an INSERT keeps one row per key as the RocksDB adapters.
import t from 'tap'
import { createInsertBatcher, keepNewest } from '../../store/clickhouse-batcher.ts'

/** An insert that records each call and finishes when the test says so. */
function controlledInsert() {
  const calls: Array<{ rows: number[]; finish(err?: Error): void }> = []
  const insert = (rows: number[]) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ rows, finish: (err) => (err ? reject(err) : resolve()) })
    })
  return { calls, insert }
}

const tick = () => new Promise((r) => setImmediate(r))

t.test('an idle writer inserts at once; calls during an INSERT share the next one', async (t) => {
  const { calls, insert } = controlledInsert()
  const write = createInsertBatcher(insert, { maxRows: 100, directRows: 50 })
  const settled: string[] = []
  const a = write([1]).then(() => settled.push('a'))
  await tick()
  t.same(
    calls.map((c) => c.rows),
    [[1]],
    'no waiting when nothing is in flight',
  )
  const b = write([2, 3]).then(() => settled.push('b'))
  const c = write([4]).then(() => settled.push('c'))
  await tick()
  t.equal(calls.length, 1, 'b and c wait for the INSERT in flight')
  calls[0].finish()
  await a
  await tick()
  t.same(
    calls.map((c) => c.rows),
    [[1], [2, 3, 4]],
    'b and c go together',
  )
  t.same(settled, ['a'], 'b and c are not resolved before their INSERT is')
  calls[1].finish()
  await Promise.all([b, c])
  t.same(settled, ['a', 'b', 'c'])
})

t.test('a failed INSERT rejects its own callers only, and the next one still goes', async (t) => {
  const { calls, insert } = controlledInsert()
  const write = createInsertBatcher(insert, { maxRows: 100, directRows: 50 })
  const first = write([1])
  const second = write([2])
  const third = write([3])
  await tick()
  calls[0].finish()
  await first
  await tick()
  calls[1].finish(new Error('ClickHouse went away'))
  await t.rejects(second, { message: 'ClickHouse went away' })
  await t.rejects(third, { message: 'ClickHouse went away' })
  const fourth = write([4])
  await tick()
  t.same(calls[2].rows, [4])
  calls[2].finish()
  await fourth
})

t.test('joined INSERTs stay under maxRows; a call of directRows or more goes at once, beside them', async (t) => {
  const { calls, insert } = controlledInsert()
  const write = createInsertBatcher(insert, { maxRows: 4, directRows: 10 })
  const pending = [write([0]), write([1, 2, 3]), write([4, 5]), write([6])]
  await tick()
  const big = write(Array.from({ length: 10 }, (_, i) => 100 + i))
  await tick()
  t.same(
    calls.map((c) => c.rows.length),
    [1, 10],
    'the big call did not wait for the queue',
  )
  calls[1].finish()
  await big
  calls[0].finish()
  await tick()
  t.same(calls[2].rows, [1, 2, 3], 'adding [4, 5] would pass maxRows')
  calls[2].finish()
  await tick()
  t.same(calls[3].rows, [4, 5, 6])
  calls[3].finish()
  await Promise.all(pending)
})

t.test('keepNewest keeps the highest version per key, the later row on a tie, in first-seen key order', async (t) => {
  const rows = [
    { k: 'a', v: 1, tag: 'a1' },
    { k: 'b', v: 2, tag: 'b2' },
    { k: 'a', v: 3, tag: 'a3' },
    { k: 'a', v: 2, tag: 'a2-late' },
    { k: 'b', v: 2, tag: 'b2-again' },
  ]
  t.same(
    keepNewest(
      rows,
      (r) => r.k,
      (r) => r.v,
    ).map((r) => r.tag),
    ['a3', 'b2-again'],
  )
  const unique = [{ k: 'x', v: 0 }]
  t.equal(
    keepNewest(
      unique,
      (r) => r.k,
      (r) => r.v,
    ),
    unique,
    'no copy when every key is unique',
  )
})
