// A preview whose transform fails says where in the transform's text: a compile error and an error
// thrown at run time (directly, in a helper, in a promise, in top-level code) carry the line and
// column of the user's source, while the message and code stay those a delivery records.
import t from 'tap'
import { postJson, startServer } from '../helpers/server.ts'

const server = await startServer()
t.teardown(() => server.stop())
const { body: created } = await postJson(`${server.url}/v1/webhooks`, { name: 'positions' })
const preview = async (transform: string, payload: unknown = { type: 'x' }) =>
  (await postJson(`${server.url}/v1/webhooks/${created.data.id}/preview`, { payload, transform })).body.data

t.test('a runtime error in the transform points at its line and column', async (t) => {
  const data = await preview('function transform(evt) {\n  const n = 1\n  return evt.missing.field\n}')
  t.match(data, {
    ok: false,
    error: { code: 'TRANSFORM_THREW', message: /^TypeError: Cannot read properties of undefined/ },
  })
  t.equal(data.error.line, 3)
  t.equal(data.error.column, 22, 'the column of `field`, the property it could not read')
})

t.test('the line of a throw on the first line, in a helper, and in an async transform', async (t) => {
  const first = await preview('function transform(evt) { throw new Error("first line") }')
  t.match(first.error, { code: 'TRANSFORM_THREW', message: 'Error: first line', line: 1, column: 33 })
  const helper = await preview(
    'function check(evt) {\n  if (!evt.id) throw new RangeError("no id")\n}\nfunction transform(evt) {\n  check(evt)\n  return { name: "x", data: evt }\n}',
  )
  t.match(helper.error, { message: 'RangeError: no id', line: 2 }, 'where it was thrown, not where it was called')
  const later = await preview('async function transform(evt) {\n  await null\n\n  throw new Error("later")\n}')
  t.match(later.error, { message: 'Error: later', line: 4 })
  const arrow = await preview('const transform = (evt) =>\n  JSON.parse(evt.type)')
  t.match(arrow.error, { code: 'TRANSFORM_THREW', message: /^SyntaxError: /, line: 2 }, 'JSON.parse called on line 2')
})

t.test('top-level code that throws, and a compile error, have their line too', async (t) => {
  const top = await preview(
    'const table = {}\ntable.x.y = 1\nfunction transform(evt) { return { name: "a", data: evt } }',
  )
  t.match(top.error, { code: 'TRANSFORM_THREW', line: 2 })
  const compile = await preview('function transform(evt) {\n  return {\n}')
  t.match(compile.error, { code: 'TRANSFORM_COMPILE' })
  t.equal(compile.error.line, 3)
})

t.test('an error without a stack, and a passing transform, have no position', async (t) => {
  const thrown = await preview('function transform() { throw "a string" }')
  t.match(thrown.error, { code: 'TRANSFORM_THREW', message: 'threw a string' })
  t.notOk('line' in thrown.error, 'a thrown string has no stack')
  const ok = await preview('function transform(evt) { return { name: "ok", data: evt } }')
  t.match(ok, { ok: true, error: null })
})
