// jsonDepth (core/event.ts): the nesting the Event API and webhook transforms limit (JSON_TOO_DEEP).
import t from 'tap'
import { jsonDepth } from '../../core/event.ts'

t.test('counts objects and arrays, not the scalars in them', async (t) => {
  t.equal(jsonDepth(7), 0)
  t.equal(jsonDepth(null), 0)
  t.equal(jsonDepth({}), 1)
  t.equal(jsonDepth([]), 1)
  t.equal(jsonDepth({ a: 1, b: 'x', c: null }), 1)
  t.equal(jsonDepth({ a: [1, { b: [] }] }), 4)
  t.equal(jsonDepth([{}, [[[]]], { a: { b: {} } }]), 4, 'the deepest branch, not the last')
})

t.test('a depth of 100,000 is counted without recursion', async (t) => {
  t.equal(jsonDepth(JSON.parse('['.repeat(100_000) + ']'.repeat(100_000))), 100_000)
  let object: Record<string, unknown> = {}
  for (let i = 1; i < 100_000; i++) object = { d: object }
  t.equal(jsonDepth(object), 100_000)
})

t.test('only own fields count', async (t) => {
  const proto = { inherited: { deep: { deeper: {} } } }
  t.equal(jsonDepth(Object.assign(Object.create(proto), { own: 1 })), 1)
})
