// The Event API's documented schema (core/event-schema.ts) and its hand-written hot-path
// validator (core/event.ts) accept and reject the same events, on generated bodies.
import { Value } from '@sinclair/typebox/value'
import fc from 'fast-check'
import t from 'tap'
import { eventProblem } from '../../core/event.ts'
import { eventSchema } from '../../core/event-schema.ts'

const limits = { maxNameLength: 12, maxIdLength: 8 }
const schema = eventSchema(limits)

// Strings of code points (no lone surrogates): whether a lone surrogate is refused is ingest's
// UTF-8 check, a dimension JSON Schema cannot state, so it is left out here.
const text = (maxLength: number) => fc.string({ unit: 'binary', maxLength })
const value = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 8.64e15, 8.64e15 + 1, 1.5, -0, ''),
)
// Near-valid events: each field absent, valid, at a limit, or of another type.
const nearEvent = fc.record(
  {
    name: fc.oneof(text(16), fc.constantFrom('sluice/x', 'sluice', 'a'.repeat(12), 'a'.repeat(13)), value),
    data: fc.oneof(fc.dictionary(text(4), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }), value, fc.constant([])),
    id: fc.oneof(text(10), fc.constant(''), value),
    ts: fc.oneof(fc.nat(), value),
    extra: value,
  },
  { requiredKeys: [] },
)

t.test('the schema and the hand-written validator agree on every generated event', async (t) => {
  fc.assert(
    fc.property(fc.oneof(nearEvent, fc.jsonValue({ maxDepth: 2 })), (event) => {
      const byHand = eventProblem(event, limits) === undefined
      return byHand === Value.Check(schema, event)
    }),
    // Fixed, as the fuzz suites: SLUICE_FUZZ_SEED=<n> explores other bodies.
    { numRuns: 5000, seed: Number(process.env.SLUICE_FUZZ_SEED ?? 20261122) },
  )
  t.pass('5000 generated bodies')
})

t.test('examples at the edges', async (t) => {
  const cases: Array<[unknown, boolean]> = [
    [{ name: 'a', data: {} }, true],
    [{ name: 'a'.repeat(12), data: {}, id: 'x'.repeat(8), ts: 0 }, true],
    [{ name: 'a'.repeat(13), data: {} }, false],
    [{ name: 'sluice/internal', data: {} }, false],
    [{ name: 'a', data: [] }, false],
    [{ name: 'a', data: {}, ts: -1 }, false],
    [{ name: 'a', data: {}, ts: 1.5 }, false],
    [{ name: 'a', data: {}, id: '' }, false],
    [{ name: 'a', data: {}, other: 1 }, false],
  ]
  for (const [event, valid] of cases) {
    t.equal(eventProblem(event, limits) === undefined, valid, `by hand: ${JSON.stringify(event)}`)
    t.equal(Value.Check(schema, event), valid, `schema: ${JSON.stringify(event)}`)
  }
})
