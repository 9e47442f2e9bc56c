// The embedded compatibility rule (docs/schemas.md, "Versions and compatibility"): each documented
// narrowing is refused with its pointer, and the widenings beside it pass.
import t from 'tap'
import { checkCompatible } from '../../control/schema-compat.ts'

const closed = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  additionalProperties: false,
  ...extra,
})

t.test('narrowing changes are refused with the pointer of the change', async (t) => {
  const cases: Array<[string, object, object, string]> = [
    ['new required', closed({ a: {} }), closed({ a: {} }, { required: ['a'] }), '/required'],
    [
      'type dropped',
      closed({ a: { type: ['string', 'null'] } }),
      closed({ a: { type: 'string' } }),
      '/properties/a/type',
    ],
    ['number to integer', closed({ a: { type: 'number' } }), closed({ a: { type: 'integer' } }), '/properties/a/type'],
    [
      'type added',
      { type: 'object', properties: { a: {} } },
      { type: 'object', properties: { a: { type: 'string' } } },
      '/properties/a/type',
    ],
    ['enum value removed', closed({ a: { enum: ['x', 'y'] } }), closed({ a: { enum: ['x'] } }), '/properties/a/enum'],
    [
      'enum added',
      closed({ a: { type: 'string' } }),
      closed({ a: { type: 'string', enum: ['x'] } }),
      '/properties/a/enum',
    ],
    ['minimum raised', closed({ a: { minimum: 0 } }), closed({ a: { minimum: 1 } }), '/properties/a/minimum'],
    ['maxLength lowered', closed({ a: { maxLength: 10 } }), closed({ a: { maxLength: 5 } }), '/properties/a/maxLength'],
    [
      'maxItems added',
      closed({ a: { type: 'array' } }),
      closed({ a: { type: 'array', maxItems: 5 } }),
      '/properties/a/maxItems',
    ],
    [
      'pattern added',
      closed({ a: { type: 'string' } }),
      closed({ a: { type: 'string', pattern: '^x' } }),
      '/properties/a/pattern',
    ],
    [
      'format changed',
      closed({ a: { format: 'date' } }),
      closed({ a: { format: 'date-time' } }),
      '/properties/a/format',
    ],
    ['object closed', { type: 'object' }, { type: 'object', additionalProperties: false }, '/additionalProperties'],
    ['property dropped from a closed object', closed({ a: {}, b: {} }), closed({ a: {} }), '/properties'],
    [
      'typed property added to an open object',
      { type: 'object' },
      { type: 'object', properties: { b: { type: 'string' } } },
      '/properties/b/type',
    ],
    [
      'nested items narrowed',
      closed({ a: { items: { type: 'number' } } }),
      closed({ a: { items: { type: 'integer' } } }),
      '/properties/a/items/type',
    ],
    ['anyOf changed', { anyOf: [{ type: 'string' }] }, { anyOf: [{ type: 'string' }, { type: 'number' }] }, '/anyOf'],
    ['refuses everything', { type: 'object' }, false as unknown as object, ''],
  ]
  for (const [what, previous, next, pointer] of cases) {
    const result = checkCompatible(previous as Record<string, unknown>, next as Record<string, unknown>)
    t.equal(result.ok ? 'compatible' : result.pointer, pointer, what)
  }
})

t.test('widening changes and annotations are compatible', async (t) => {
  const cases: Array<[string, object, object]> = [
    ['same schema', closed({ a: { type: 'string' } }), closed({ a: { type: 'string' } })],
    ['required dropped', closed({ a: {} }, { required: ['a'] }), closed({ a: {} })],
    ['integer to number', closed({ a: { type: 'integer' } }), closed({ a: { type: 'number' } })],
    ['type added to a union', closed({ a: { type: 'string' } }), closed({ a: { type: ['string', 'null'] } })],
    ['enum value added', closed({ a: { enum: ['x'] } }), closed({ a: { enum: ['x', 'y'] } })],
    ['enum dropped', closed({ a: { enum: ['x'] } }), closed({ a: {} })],
    ['minimum lowered', closed({ a: { minimum: 1 } }), closed({ a: { minimum: 0 } })],
    ['pattern removed', closed({ a: { pattern: '^x' } }), closed({ a: {} })],
    ['optional property added to a closed object', closed({ a: {} }), closed({ a: {}, b: { type: 'string' } })],
    ['object opened', closed({ a: {} }), { type: 'object', properties: { a: {} } }],
    ['description changed', closed({ a: { description: 'x' } }), closed({ a: { description: 'y', title: 'A' } })],
  ]
  for (const [what, previous, next] of cases)
    t.same(checkCompatible(previous as Record<string, unknown>, next as Record<string, unknown>), { ok: true }, what)
})
