// Generated requests for the edge fuzz suite. Each case says what a correct server must do
// with it, decided by how the case was built (a valid event broken in one known way must be
// refused), never by asking the server's own validator.
import fc from 'fast-check'

export type Expect = 'ok' | 'reject' | 'any'
export interface Case {
  kind: string
  method: string
  url: string
  headers: Record<string, string>
  payload?: string | Buffer
  expect: Expect
  /** Events in an accepted Event API body. */
  events?: number
}

export const MAX_DATE_MS = 8.64e15
const json = (value: unknown) => JSON.stringify(value)

const name = fc.stringMatching(/^[a-z][a-z0-9]{0,9}\/[a-z0-9._-]{1,20}$/)
const data = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 })
const id = fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' })
const ts = fc.integer({ min: 0, max: MAX_DATE_MS })
export const validEvent = fc.record({ name, data, id, ts }, { requiredKeys: ['name', 'data'] })
type Ev = Record<string, unknown>

const notString = fc.oneof(
  fc.integer(),
  fc.constant(null),
  fc.boolean(),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
)
const notObject = fc.oneof(
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.string(),
  fc.integer(),
  fc.constant(null),
  fc.boolean(),
)
const badTs = fc.oneof(
  fc.constant(-1),
  fc.constant(1.5),
  fc.constant(MAX_DATE_MS + 1),
  fc.constant(2 ** 53),
  fc.constant('1700000000000'),
  fc.constant(null),
  fc.double({ noInteger: true, noDefaultInfinity: true, noNaN: true }),
)
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code))
const unknownKey = fc.oneof(
  fc.constant('__proto__'),
  fc.constant('constructor'),
  fc.constant('prototype'),
  fc.constant('Name'),
  fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !['name', 'data', 'id', 'ts'].includes(k)),
)

/** One event broken in one way: its JSON text. */
export const invalidEventText: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(validEvent, notString).map(([e, v]) => json({ ...e, name: v })),
  validEvent.map((e) => json({ ...e, name: '' })),
  validEvent.map((e) => json({ ...e, name: 'a/'.padEnd(257, 'x') })),
  validEvent.map((e) => json({ ...e, name: `sluice/${e.name}` })),
  fc.tuple(validEvent, loneSurrogate).map(([e, s]) => json({ ...e, name: `${e.name}${s}` })),
  fc.tuple(validEvent, notObject).map(([e, v]) => json({ ...e, data: v })),
  validEvent.map(({ data: _, ...e }) => json(e)),
  validEvent.map(({ name: _, ...e }) => json(e)),
  fc
    .tuple(
      validEvent,
      fc.oneof(
        notString.filter((v) => typeof v !== 'string'),
        fc.constant(''),
      ),
    )
    .map(([e, v]) => json({ ...e, id: v })),
  validEvent.map((e) => json({ ...e, id: 'x'.repeat(513) })),
  fc
    .tuple(validEvent, loneSurrogate, fc.string({ maxLength: 5 }))
    .map(([e, s, tail]) => json({ ...e, id: `k${s}${tail}` })),
  fc.tuple(validEvent, badTs).map(([e, v]) => json({ ...e, ts: v })),
  // Spliced into the text: an object spread would set the prototype, not add a key.
  fc
    .tuple(validEvent, unknownKey, fc.jsonValue({ maxDepth: 1 }))
    .map(([e, k, v]) => `{${json(k)}:${json(v)},${json(e).slice(1)}`),
  fc
    .oneof(
      fc.jsonValue({ maxDepth: 2 }).filter((v) => typeof v !== 'object' || v === null),
      fc.constant([]),
      fc.constant({}),
    )
    .map(json),
)

const asBody = (events: Ev[], single: boolean) => json(single && events.length === 1 ? events[0] : events)
export const validBody = fc
  .tuple(fc.array(validEvent, { minLength: 1, maxLength: 10 }), fc.boolean())
  .map(([events, single]) => ({ text: asBody(events, single), events: events.length }))

/** A batch with one broken event at a random place: all-or-nothing, so refused. */
export const invalidBatch = fc
  .tuple(fc.array(validEvent, { maxLength: 10 }), invalidEventText, fc.nat())
  .map(([events, bad, at]) => {
    const texts = events.map(json)
    texts.splice(at % (texts.length + 1), 0, bad)
    return `[${texts.join(',')}]`
  })

/** Valid body text cut short (never a complete body), or text that is not JSON. */
export const malformedJson = fc.oneof(
  validBody.chain(({ text }) => fc.nat({ max: text.length - 1 }).map((cut) => text.slice(0, cut))),
  fc.string({ maxLength: 200 }).filter((s) => !s.trim().startsWith('{') && !s.trim().startsWith('[')),
  fc.constantFrom(
    '{',
    '[',
    '{"name":"a/b","data":{}',
    '{"name":"a/b","data":{},}',
    "{'name':'a/b','data':{}}",
    'null',
    '"a"',
    'NaN',
    '{"name":"a/b","data":{}} x',
  ),
)

const badUtf8 = fc.constantFrom(
  [0xff],
  [0xfe],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0x80],
  [0xe2, 0x82],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
)
/** A valid body with bytes that are not UTF-8 put in somewhere. */
export const invalidUtf8 = fc.tuple(validBody, badUtf8, fc.nat()).map(([{ text }, bytes, at]) => {
  const buffer = Buffer.from(text)
  const i = at % (buffer.length + 1)
  return Buffer.concat([buffer.subarray(0, i), Buffer.from(bytes), buffer.subarray(i)])
})

/** `data` nested `levels` deep; the body is one level more. */
export function nested(levels: number): string {
  return `{"name":"a/deep","data":${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}}`
}

/** A single event body of exactly `bytes` bytes. */
export function bodyOfSize(bytes: number): string {
  const head = '{"name":"a/size","data":{"p":"'
  const tail = '"}}'
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail
}

export function manyEvents(n: number): string {
  return `[${Array.from({ length: n }, (_, i) => `{"name":"a/many","data":{"i":${i}}}`).join(',')}]`
}

export const contentTypes = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'multipart/form-data; boundary=x',
  'APPLICATION/JSON',
)
export const garbageContentTypes = fc.oneof(
  fc.constantFrom('', ';;;', '/', 'json', '\u00ff/\u00ff', 'a/b; =x'),
  fc.string({ maxLength: 30 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
)
export const keyText = fc.string({
  minLength: 1,
  maxLength: 120,
  unit: fc.constantFrom(...Array.from('abcdefghijklmnopqrstuvwxyz0123456789-_.~%é😀 ')),
})

/** A value to put where a REST route has a path parameter. */
export function pathValue(pool: string[]) {
  return fc.oneof(
    fc.constantFrom(...pool),
    fc.string({ minLength: 1, maxLength: 40 }),
    fc.string({ minLength: 101, maxLength: 140 }),
    fc.constantFrom('..', '.', '%', '%00', 'wh_', 'x'.repeat(26), '01ARZ3NDEKTSV4RRFFQ69G5FAV', '\ud800'),
  )
}

const queryKeys = fc.constantFrom(
  'limit',
  'cursor',
  'name',
  'env',
  'id',
  'received_after',
  'received_before',
  'include_duplicates',
  'status',
  'event',
  'function',
  'x',
  '__proto__',
  'constructor',
)
const queryValues = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.integer().map(String),
  fc.constantFrom('-1', '0', '1001', '1e400', 'NaN', 'true', '', '\ud800', 'x'.repeat(600)),
)
export const queryString = fc
  .array(fc.tuple(queryKeys, queryValues), { maxLength: 4 })
  .map((pairs) =>
    pairs.length
      ? '?' +
        pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.isWellFormed() ? v : 'x')}`).join('&')
      : '',
  )

const restFields = fc.constantFrom(
  'name',
  'env',
  'branch',
  'transform',
  'max_body_bytes',
  'max_events_per_second',
  'allow_ips',
  'deny_ips',
  'allow_events',
  'deny_events',
  'verification',
  'disabled',
  'payload',
  'headers',
  'query',
  'status',
  '__proto__',
  'constructor',
)
export const restBody: fc.Arbitrary<{ payload?: string | Buffer; contentType?: string }> = fc.oneof(
  fc.constant({}),
  fc
    .dictionary(restFields, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 })
    .map((o) => ({ payload: json(o), contentType: 'application/json' })),
  fc.jsonValue({ maxDepth: 3 }).map((v) => ({ payload: json(v), contentType: 'application/json' })),
  malformedJson.map((payload) => ({ payload, contentType: 'application/json' })),
  invalidUtf8.map((payload) => ({ payload, contentType: 'application/json' })),
  fc.integer({ min: 60, max: 2000 }).map((n) => ({ payload: nested(n), contentType: 'application/json' })),
  fc
    .tuple(fc.jsonValue({ maxDepth: 2 }), garbageContentTypes)
    .map(([v, contentType]) => ({ payload: json(v), contentType })),
  fc.constant({ payload: '', contentType: 'application/json' }),
)
