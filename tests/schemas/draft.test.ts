// Drafting a schema from events (control/schema-draft.ts), its diff to the current version
// (control/schema-diff.ts), and the embedded violation scan's bound (store/violations-scan.ts).
import t from 'tap'
import { compileSchema } from '../../control/schema-compile.ts'
import { diffSchemas } from '../../control/schema-diff.ts'
import { draftSchema, ENUM_MIN_SAMPLES } from '../../control/schema-draft.ts'
import type { StoredEvent } from '../../core/event.ts'
import type { EventQuery } from '../../store/types.ts'
import { scanSchemaViolations } from '../../store/violations-scan.ts'

const orders = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    orderId: `3f2b8c1e-4a5d-4e6f-8a9b-${String(i).padStart(12, '0')}`,
    amount: i % 2 === 0 ? i : i + 0.5,
    quantity: i,
    currency: ['EUR', 'USD', 'GBP'][i % 3],
    note: i % 4 === 0 ? null : `note ${i}`,
    placedAt: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    email: `buyer${i}@example.com`,
    site: `https://shop.example.com/o/${i}`,
    gift: i % 2 === 0,
    lines: [{ sku: `s-${i}`, qty: 1 }, { sku: 'x' }],
    ...(i % 3 === 0 && { coupon: 'WINTER' }),
  }))

t.test('a draft has each field typed, required where always present, enums and formats where they hold', async (t) => {
  const schema = draftSchema(orders(ENUM_MIN_SAMPLES))
  t.same(schema, {
    type: 'object',
    properties: {
      orderId: { type: 'string', format: 'uuid' },
      amount: { type: 'number' },
      quantity: { type: 'integer' },
      currency: { type: 'string', enum: ['EUR', 'GBP', 'USD'] },
      note: { type: ['string', 'null'] },
      placedAt: { type: 'string', format: 'date-time' },
      email: { type: 'string', format: 'email' },
      site: { type: 'string', format: 'uri' },
      gift: { type: 'boolean' },
      lines: {
        type: 'array',
        items: {
          type: 'object',
          properties: { sku: { type: 'string' }, qty: { type: 'integer' } },
          required: ['sku'],
        },
      },
      coupon: { type: 'string' }, // in 7 events only: too few for an enum
    },
    required: ['orderId', 'amount', 'quantity', 'currency', 'note', 'placedAt', 'email', 'site', 'gift', 'lines'],
  })
  t.ok(compileSchema(schema).ok, 'the draft is a schema the server accepts')
  const validate = (compileSchema(schema) as { ok: true; validate: (d: unknown) => boolean }).validate
  t.ok(
    orders(ENUM_MIN_SAMPLES).every((d) => validate(d)),
    'every sampled event passes it',
  )
})

t.test('too few samples or too many values give no enum; one non-matching string drops the format', async (t) => {
  const few = draftSchema(orders(ENUM_MIN_SAMPLES - 1)) as { properties: Record<string, unknown> }
  t.same(few.properties.currency, { type: 'string' }, `${ENUM_MIN_SAMPLES - 1} samples prove no enum`)
  const many = draftSchema(Array.from({ length: 40 }, (_, i) => ({ code: `c${i % 11}` }))) as any
  t.same(many.properties.code, { type: 'string' }, '11 distinct values are no enum')
  const mixed = draftSchema([{ at: '2026-01-01T00:00:00Z' }, { at: 'yesterday' }]) as any
  t.same(mixed.properties.at, { type: 'string' })
  const nullableEnum = draftSchema(Array.from({ length: 40 }, (_, i) => ({ s: i % 2 ? 'a' : null }))) as any
  const nullable = { type: ['string', 'null'], enum: ['a', null] }
  t.same(nullableEnum.properties.s, nullable, 'null stays allowed by the enum (20 strings among 40 values)')
  const numbers = draftSchema([{ n: 1 }, { n: 'one' }, {}]) as any
  const absentOnce = { type: 'object', properties: { n: { type: ['string', 'integer'] } } }
  t.same(numbers, absentOnce, 'not required: absent once')
})

t.test('the diff names each change by its JSON pointer in the schema', async (t) => {
  const current = {
    type: 'object',
    properties: { amount: { type: 'integer' }, 'a/b': { type: 'string' }, old: { type: 'string' } },
    required: ['amount'],
  }
  const proposed = {
    type: 'object',
    properties: { amount: { type: 'number' }, 'a/b': { type: 'string' }, currency: { enum: ['EUR'] } },
    required: ['amount', 'currency'],
  }
  t.same(diffSchemas(current, proposed), [
    { op: 'change', path: '/properties/amount/type', from: 'integer', to: 'number' },
    { op: 'remove', path: '/properties/old', from: { type: 'string' } },
    { op: 'add', path: '/properties/currency', to: { enum: ['EUR'] } },
    { op: 'change', path: '/required', from: ['amount'], to: ['amount', 'currency'] },
  ])
  t.same(diffSchemas(proposed, proposed), [], 'the same schema: no changes')
  t.same(diffSchemas({}, { type: 'object' }), [{ op: 'add', path: '/type', to: 'object' }], 'against no schema')
})

t.test('the embedded violation scan stops at its bound and says the counts are partial', async (t) => {
  const events: StoredEvent[] = Array.from({ length: 30 }, (_, i) => ({
    internalId: `id-${String(100 - i).padStart(3, '0')}`,
    id: `e${i}`,
    name: 'n',
    data: {},
    ts: 0,
    env: 'production',
    receivedAt: 10_000 - i,
    source: { kind: 'api' },
    ...(i % 2 === 0 && { schemaViolations: ['data/a: must be number'] }),
  }))
  const store = {
    // Newest first, paged by cursor: what both event stores answer.
    async queryEvents(q: EventQuery) {
      const after = events.filter((e) => q.cursor === undefined || e.internalId < q.cursor)
      const page = after.slice(0, q.limit)
      return { events: page, nextCursor: after.length > q.limit ? page[page.length - 1].internalId : null }
    },
  }
  const q = { from: 0, to: 20_000, env: 'production', name: 'n', bucketMs: 10_000, samples: 3 }
  const all = await scanSchemaViolations(store, q)
  t.same([all.total, all.counts, all.truncated], [15, [14, 1], false])
  t.same(
    all.samples.map((s) => s.id),
    ['e0', 'e2', 'e4'],
  )
  const bounded = await scanSchemaViolations(store, q, { maxEvents: 10, timeBudgetMs: 10_000 })
  t.same([bounded.total, bounded.truncated], [5, true], 'the newest 10 events read, 5 of them violating')
})
