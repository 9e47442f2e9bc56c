// Header names and query values reach a transform in one shape whatever the sender wrote.
import t from 'tap'
import { canonicalHeaders, queryArrays } from '../../core/canonical.ts'

t.test('header names: first letter and each letter after a dash upper case, the rest lower case', async (t) => {
  t.same(
    canonicalHeaders({
      'x-github-event': 'push',
      'X-GITHUB-DELIVERY': 'abc',
      'content-type': 'application/json',
      'x-shopify-api-version': '2024-04',
    }),
    {
      'X-Github-Event': 'push',
      'X-Github-Delivery': 'abc',
      'Content-Type': 'application/json',
      'X-Shopify-Api-Version': '2024-04',
    },
  )
})

t.test('repeated headers are joined with ", "; absent ones are left out', async (t) => {
  t.same(canonicalHeaders({ 'set-cookie': ['a=1', 'b=2'], accept: undefined, 'Svix-Id': 'msg_1' }), {
    'Set-Cookie': 'a=1, b=2',
    'Svix-Id': 'msg_1',
  })
})

t.test('two spellings of one header in a plain record become one header with both values', async (t) => {
  t.same(canonicalHeaders({ 'x-a': '1', 'X-A': '2' }), { 'X-A': '1, 2' })
})

t.test('header values are kept exactly, spaces included', async (t) => {
  t.same(canonicalHeaders({ 'x-event': '  Order Paid  ' }), { 'X-Event': '  Order Paid  ' })
})

t.test('query values are always arrays, from a record or from URLSearchParams', async (t) => {
  t.same(queryArrays({ page: '2', tag: ['a', 'b'], empty: '' }), { page: ['2'], tag: ['a', 'b'], empty: [''] })
  t.same(queryArrays(new URLSearchParams('page=2&tag=a&tag=b&flag')), { page: ['2'], tag: ['a', 'b'], flag: [''] })
  t.same(queryArrays({ n: 3, gone: undefined }), { n: ['3'] }, 'non-strings become strings, undefined is left out')
})

t.test('a key named __proto__ stays a plain key and does not change the prototype', async (t) => {
  const q = queryArrays(new URLSearchParams('__proto__=x&a=1'))
  t.same(Object.keys(q), ['__proto__', 'a'])
  t.same(q['__proto__'], ['x'])
  t.equal(Object.getPrototypeOf(q), Object.prototype)
  const h = canonicalHeaders(JSON.parse('{"__proto__":"x"}'))
  t.equal(Object.hasOwn(h, '__proto__'), true)
  t.equal(Object.getPrototypeOf(h), Object.prototype)
})
