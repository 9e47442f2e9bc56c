// The embedded event store beyond the shared contract: what a query costs (entries read, not time),
// the scan budget, one atomic write per insert, index entries shared by the events of an insert.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { toEventRecords, type EventSource, type StoredEvent } from '../../core/event.ts'
import { newIdSeed, seededUlids } from '../../core/ids.ts'
import { keyPrefix } from '../../core/keyspaces.ts'
import { openRocks, type Rocks, type ScanRange, type WriteOp } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createRocksInsights } from '../../store/insights-rocksdb.ts'
import { createRocksEventStore } from '../../store/rocksdb.ts'
import { eventKey } from '../../store/rocksdb-events.ts'
import { group, keyPart, pushIndexOps } from '../../store/rocksdb-index.ts'
import type { EventQuery, EventStore } from '../../store/types.ts'
import { removeDir, tempDir } from '../helpers/server.ts'

/** A Rocks that counts the entries its scans yield and keeps the batches it writes. */
class CountingRocks implements Rocks {
  read = 0
  writes: WriteOp[][] = []
  private readonly inner: Rocks
  constructor(inner: Rocks) {
    this.inner = inner
  }
  get(key: string) {
    return this.inner.get(key)
  }
  getMany(keys: string[]) {
    return this.inner.getMany(keys)
  }
  write(ops: WriteOp[]) {
    this.writes.push(ops)
    return this.inner.write(ops)
  }
  async *scan(range: ScanRange) {
    for await (const entry of this.inner.scan(range)) {
      this.read++
      yield entry
    }
  }
  close() {
    return this.inner.close()
  }
}

const idAt = (ms: number) => seededUlids(newIdSeed(ms), 1)[0]
const BASE = Date.UTC(2026, 0, 1)
const STEP_MS = 1000

/** Event i, received STEP_MS after event i - 1. */
function event(i: number, overrides: Partial<StoredEvent> = {}): StoredEvent {
  const internalId = idAt(BASE + i * STEP_MS)
  return {
    internalId,
    id: internalId,
    name: `app/e${i % 10}`,
    data: { i },
    ts: BASE + i,
    env: i % 3 === 0 ? 'staging' : 'production',
    receivedAt: BASE + i * STEP_MS,
    source: { kind: 'api' },
    ...overrides,
  }
}

async function rocksIn(t: Test) {
  const dir = await tempDir()
  const rocks = new CountingRocks(await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS)))
  t.teardown(async () => {
    await rocks.close()
    await removeDir(dir)
  })
  return rocks
}

async function listAll(store: EventStore, q: EventQuery): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = []
  for (let cursor: string | undefined, pages = 1; ; pages++) {
    const page = await store.queryEvents({ ...q, ...(cursor && { cursor }) })
    ids.push(...page.events.map((e) => e.internalId))
    if (page.nextCursor === null) return { ids, pages }
    cursor = page.nextCursor
  }
}

t.test('a filter that matches nothing, or little, reads a handful of entries, not every event', async (t) => {
  const rocks = await rocksIn(t)
  const store = createRocksEventStore(rocks)
  const events = Array.from({ length: 3000 }, (_, i) => event(i))
  await store.insertEvents(events)
  const cost = async (q: Omit<EventQuery, 'limit'>) => {
    rocks.read = 0
    const page = await store.queryEvents({ ...q, limit: 50 })
    return { events: page.events.length, cursor: page.nextCursor, read: rocks.read }
  }
  t.same(await cost({ name: 'nope' }), { events: 0, cursor: null, read: 0 }, 'name without a match')
  t.same(await cost({ env: 'nope' }), { events: 0, cursor: null, read: 0 }, 'env without a match')
  t.same(await cost({ id: 'nope' }), { events: 0, cursor: null, read: 0 }, 'dedup id without a match')
  const none = { events: 0, cursor: null, read: 0 }
  t.same(await cost({ receivedAfter: BASE + 10_000_000 }), none, 'received_after in the future')
  t.same(await cost({ receivedBefore: BASE - 10_000_000 }), none, 'received_before in the past')
  t.same(await cost({ name: 'app/e1', env: 'nope' }), { events: 0, cursor: null, read: 0 }, 'name and env')
  const recent = await cost({ receivedAfter: BASE + 2990 * STEP_MS })
  t.equal(recent.events, 9)
  t.ok(recent.read <= 9 + 3, `the last 9 events read ${recent.read} entries (ID times may be off by up to 2 s)`)
  const paged = await cost({ name: 'app/e7', env: 'staging' })
  // 51 index entries scanned; the events, each alone in its millisecond, by their own keys (a multi-get).
  t.same([paged.events, paged.read], [50, 51], 'a page of env + name reads the page and one more')
  t.equal(paged.cursor, events.filter((e) => e.name === 'app/e7' && e.env === 'staging').reverse()[49].internalId)
})

t.test('a query reads at most its scan budget, then gives a cursor; the pages hold every match once', async (t) => {
  const rocks = await rocksIn(t)
  const store = createRocksEventStore(rocks, { scanBudget: 100 })
  const events = Array.from({ length: 1000 }, (_, i) => event(i, i % 97 === 0 ? { name: 'rare/one' } : {}))
  events[500] = { ...events[500], duplicateOf: events[499].internalId }
  await store.insertEvents(events)
  // Every event but the rare ones is production or staging: an env + time query reads the env index.
  rocks.read = 0
  const first = await store.queryEvents({ env: 'production', receivedBefore: BASE + 300 * STEP_MS, limit: 1000 })
  t.ok(rocks.read <= 100, `one page read ${rocks.read} entries`)
  t.ok(first.nextCursor, 'a cursor to continue')
  const expected = events
    .filter((e) => e.env === 'production' && e.receivedAt < BASE + 300 * STEP_MS)
    .map((e) => e.internalId)
    .reverse()
  const listed = await listAll(store, { env: 'production', receivedBefore: BASE + 300 * STEP_MS, limit: 1000 })
  t.same(listed.ids, expected, 'env + time, page by page')
  t.ok(listed.pages > 1, `${listed.pages} pages`)
  const noDuplicates = events
    .filter((e) => e.duplicateOf === undefined)
    .map((e) => e.internalId)
    .reverse()
  t.same((await listAll(store, { limit: 7 })).ids, noDuplicates, 'every event, in pages of 7 and budget-bounded')
  const rare = await listAll(store, { name: 'rare/one', limit: 3 })
  t.same(
    rare.ids,
    events
      .filter((e) => e.name === 'rare/one')
      .map((e) => e.internalId)
      .reverse(),
    'a rare name',
  )
})

t.test('more off-clock events in a time range than the budget: the index is read unwindowed, exactly', async (t) => {
  const rocks = await rocksIn(t)
  const store = createRocksEventStore(rocks, { scanBudget: 400 })
  // 200 events; every other one has an ID made an hour before it was received.
  const events = Array.from({ length: 200 }, (_, i) => {
    const e = event(i)
    return i % 2 ? { ...e, receivedAt: e.receivedAt + 3_600_000 } : e
  })
  await store.insertEvents(events)
  const q = { receivedAfter: BASE + 3_600_000, limit: 4 }
  const expected = events
    .filter((e) => e.receivedAt > q.receivedAfter)
    .map((e) => e.internalId)
    .reverse()
  t.same((await listAll(store, q)).ids, expected, '100 off-clock events in range: the whole index, page by page')
  // Off-clock entries carry env, name and dedup id: only the 10 of app/e1 are read (100 + 10 × 20 < 400),
  // so the ID window holds.
  const named = { ...q, name: 'app/e1' }
  rocks.read = 0
  const page = await store.queryEvents(named)
  t.ok(rocks.read <= 120, `${rocks.read} entries read for a page`)
  const namedExpected = events
    .filter((e) => e.name === 'app/e1' && e.receivedAt > q.receivedAfter)
    .map((e) => e.internalId)
    .reverse()
  t.same(
    page.events.map((e) => e.internalId),
    namedExpected.slice(0, 4),
  )
  t.same((await listAll(store, named)).ids, namedExpected, 'and page by page')
  const near = { receivedAfter: BASE + 3_600_000 + 150 * STEP_MS, limit: 10 }
  const nearExpected = events
    .filter((e) => e.receivedAt > near.receivedAfter)
    .map((e) => e.internalId)
    .reverse()
  t.same((await listAll(store, near)).ids, nearExpected, 'a range with few off-clock events merges them in')
})

t.test('an event and its index entries are one write', async (t) => {
  const rocks = await rocksIn(t)
  const store = createRocksEventStore(rocks)
  rocks.writes = []
  const late = event(1, { receivedAt: BASE + STEP_MS + 7_200_000 })
  await store.insertEvents([event(0, { id: 'order-0' }), late])
  t.equal(rocks.writes.length, 1)
  const spaces = rocks.writes[0].map((op) => (op.type === 'put' ? op.key[0] : op.type)).join('')
  // By dedup id only when one was given (else the internal ID is the dedup id); by receive time only when off
  // clock. The two events' IDs are a second apart: an index value each.
  t.equal(spaces, 'EE' + 'H' + 'INGP' + 'NGP', 'events, by receive time, by dedup id, name, env, env + name')
})

t.test("an event's JSON as read off the bus is written as is; without it, the event is serialized", async (t) => {
  const rocks = await rocksIn(t)
  const store = createRocksEventStore(rocks)
  const [a, b] = [event(0), event(1)]
  // Another key order than JSON.stringify's, as a producer elsewhere may have written it.
  const { data, ...rest } = a
  const text = Buffer.from(JSON.stringify({ data, ...rest }))
  rocks.writes = []
  await store.insertEventTexts([a], [text])
  await store.insertEvents([b])
  const values = rocks.writes
    .flat()
    .flatMap((op) => (op.type === 'put' && op.key[0] === 'E' ? [op.value.toString()] : []))
  t.same(values, [text.toString(), JSON.stringify(b)])
  t.same(await store.getEvent(a.internalId), a)
})

/** `count` events of one name and env whose IDs share millisecond `ms` (as one request's do). */
function sameMs(ms: number, count: number, name = 'app/burst'): StoredEvent[] {
  return seededUlids(newIdSeed(ms), count).map((internalId, i) => ({
    internalId,
    id: internalId,
    name,
    data: { i },
    ts: ms,
    env: 'production',
    receivedAt: ms,
    source: { kind: 'api' },
  }))
}

t.test('the events of one insert share values: a 500-event request is 16 event values and 3 index puts', async (t) => {
  const rocks = await rocksIn(t)
  const store = createRocksEventStore(rocks)
  const events = sameMs(BASE, 500)
  rocks.writes = []
  await store.insertEvents(events)
  const puts = rocks.writes[0].map((op) => (op.type === 'put' ? op.key[0] : op.type)).join('')
  t.equal(puts, 'E'.repeat(16) + 'NGP', '32 events to a value, then one value per index (name, env, env + name)')
  const newest = events.map((e) => e.internalId).reverse()
  t.same((await listAll(store, { name: 'app/burst', env: 'production', limit: 30 })).ids, newest)
})

t.test('inserts cut otherwise (a batch delivered again) lose no entry and list each event once', async (t) => {
  const rocks = await rocksIn(t)
  const store = createRocksEventStore(rocks, { scanBudget: 40 })
  // 300 events of one millisecond, inserted as three interleaved batches, then again in other cuts:
  // values overlap in ID range, several share their largest ID.
  const events = sameMs(BASE, 300)
  for (const rest of [0, 1, 2]) await store.insertEvents(events.filter((_, i) => i % 3 === rest))
  await store.insertEvents(events.slice(100, 200))
  await store.insertEvents([events[299]])
  await store.insertEvents([events[298], events[299]])
  const newest = events.map((e) => e.internalId).reverse()
  for (const [q, what] of [
    [{ limit: 9 }, 'every event (the event values themselves), pages of 9'],
    [{ name: 'app/burst', limit: 7 }, 'by name, pages of 7 cut inside the millisecond'],
    [{ env: 'production', limit: 50 }, 'by env, pages cut by the scan budget'],
    [{ name: 'app/burst', env: 'production', limit: 1 }, 'by env + name, one by one'],
    [{ receivedAfter: BASE - 1, receivedBefore: BASE + 1, name: 'app/burst', limit: 64 }, 'by name and time'],
  ] as const) {
    const listed = await listAll(store, q)
    t.same(listed.ids, newest, what)
  }
  const insights = createRocksInsights(rocks)
  const counts = await insights.eventCounts({ from: BASE - 500, to: BASE + 500, bucketMs: 1000, top: 5 })
  t.match(counts.series, [{ name: 'app/burst', total: 300 }], 'counted once each')
})

/**
 * A value of several events as data format 2 wrote it (`<internalId><the event's JSON>` lines, by ID),
 * and its index values (`<internalId><receivedAt>` members; these events share a name and env).
 */
function format2Values(events: StoredEvent[]): WriteOp[] {
  const ids = events.map((e) => e.internalId).sort()
  const lines = events.map((e) => e.internalId + JSON.stringify(e)).sort()
  const index = group(events.map((e) => e.internalId + e.receivedAt).sort())
  const { name, env } = events[0]
  return [
    { type: 'put', key: eventKey(group(ids).keyEnd), value: lines.join('\n') },
    ...[
      keyPrefix('eventsByName', keyPart(name)),
      keyPrefix('eventsByEnv', keyPart(env)),
      keyPrefix('eventsByEnvName', keyPart(env) + keyPart(name)),
    ].map((prefix): WriteOp => ({ type: 'put', key: prefix + index.keyEnd, value: index.value })),
  ]
}

t.test("format 1's one key per event, format 2's and format 3's shared values read as one store", async (t) => {
  const rocks = await rocksIn(t)
  const store = createRocksEventStore(rocks, { scanBudget: 60 })
  // 90 events of one millisecond and 10 of the next: a third written as data format 1 wrote them (a
  // key each), a third as format 2 did (values of 15), the rest inserted now, and 5 in both.
  const events = [...sameMs(BASE, 90), ...sameMs(BASE + 1, 10)].sort((a, b) => (a.internalId < b.internalId ? -1 : 1))
  const old = events.filter((_, i) => i % 3 === 0)
  const two = events.filter((_, i) => i % 3 === 1)
  const ops: WriteOp[] = old.map((e) => ({ type: 'put', key: eventKey(e.internalId), value: JSON.stringify(e) }))
  const twoFirst = two.filter((e) => e.receivedAt === BASE)
  for (let i = 0; i < twoFirst.length; i += 15) ops.push(...format2Values(twoFirst.slice(i, i + 15)))
  ops.push(...format2Values(two.filter((e) => e.receivedAt !== BASE)))
  pushIndexOps(old, ops)
  await rocks.write(ops)
  await store.insertEvents([...events.filter((_, i) => i % 3 === 2), ...old.slice(0, 5), ...two.slice(0, 5)])
  const newest = events.map((e) => e.internalId).reverse()
  for (const [q, what] of [
    [{ limit: 8 }, 'every event, pages of 8'],
    [{ name: 'app/burst', limit: 11 }, 'by name'],
    [{ receivedAfter: BASE - 1, limit: 100 }, 'by time'],
  ] as const)
    t.same((await listAll(store, q)).ids, newest, what)
  for (const e of [events[0], events[1], events[2], events[89], events[98], events[99]])
    t.same(await store.getEvent(e.internalId), e)
  t.equal(await store.getEvent(seededUlids(newIdSeed(BASE), 91)[90]), null, 'an ID of that millisecond never stored')
})

const awkward = [
  'plain',
  'quote " and \\ backslash',
  'line\nbreak\ttab\u0001',
  'ünïcödé ✓ 🎉',
  '</script>',
  '\u2028\u2029',
]
const sources: EventSource[] = [
  { kind: 'api' },
  { kind: 'api', keyId: 'key_01"x' },
  { kind: 'webhook', webhookId: 'wh_1', requestId: 'r\\1' },
  { kind: 'function', functionId: 'app-f', runId: '01J', stepId: 'step "a"' },
  { kind: 'replay', eventId: '01JAAAAAAAAAAAAAAAAAAAAAAA' },
  { kind: 'invoke', functionId: 'app-f', runId: '01J', stepId: 's', seq: 3, target: 'app-g', routeKey: 'k"1' },
  { kind: 'cron', functionId: 'app-f', cron: '*/5 * * * *' },
]

/** Records of every kind, awkward strings in every field, all with IDs of one millisecond: they share values, and differ in every field a value's first line states. */
function everyKind(): StoredEvent[] {
  const out: StoredEvent[] = []
  let n = 0
  for (const name of awkward)
    for (const env of ['production', awkward[(n + 1) % awkward.length]])
      for (const source of sources) {
        const inputs = [
          {
            name,
            data: { s: awkward[n % awkward.length], n, nested: { list: [1, 'two', null, true, { deep: name }] } },
          },
          { name, data: {}, id: awkward[(n + 2) % awkward.length], ts: 42 },
        ]
        out.push(...toEventRecords(inputs, { internalIds: ['', ''], env, receivedAt: BASE + (n % 3), source }))
        n++
      }
  const [first, second, third] = out
  out.push({ ...first, schemaViolations: ['data/amount: must be integer', 'data: "quoted"'] })
  out.push({ ...second, duplicateOf: third.internalId })
  out.push({ ...third, schemaViolations: [], duplicateOf: first.internalId })
  // Sources equal in content but not the same object, and one source object changing between events.
  out.push({ ...first, source: { ...first.source } }, { ...first, source: { kind: 'api', keyId: 'other' } })
  out.push({ ...first, ts: 1.5 }, { ...first, ts: Number.NaN }, { ...first, receivedAt: Number.POSITIVE_INFINITY })
  const ids = seededUlids(newIdSeed(BASE), out.length)
  return out.map((e, i) => ({ ...e, internalId: ids[i], id: e.id === '' ? ids[i] : e.id }))
}

t.test('every kind of event reads back as it was written, field for field and in the same order', async (t) => {
  const rocks = await rocksIn(t)
  const store = createRocksEventStore(rocks)
  const events = everyKind()
  await store.insertEvents(events)
  const values = rocks.writes[0].filter((op) => op.type === 'put' && op.key.startsWith('E'))
  t.equal(values.length, Math.ceil(events.length / 32), 'values of 32 events')
  // What a reader gets is what JSON.stringify(event) wrote before: the same text, NaN and Infinity as null.
  const expected = events.map((e) => JSON.stringify(e))
  const read = await Promise.all(events.map((e) => store.getEvent(e.internalId)))
  t.same(
    read.map((e) => JSON.stringify(e)).filter((text, i) => text !== expected[i]),
    [],
    `${events.length} events by ID`,
  )
  const listed: StoredEvent[] = []
  for (let cursor: string | undefined; ; ) {
    const page = await store.queryEvents({ limit: 50, includeDuplicates: true, ...(cursor && { cursor }) })
    listed.push(...page.events)
    if (page.nextCursor === null) break
    cursor = page.nextCursor
  }
  t.same(listed.map((e) => JSON.stringify(e)).reverse(), expected, 'the same events, listed')
})

t.test(
  "a request's events share a value's first line: each line holds the event's ID and data only; index members their ID",
  async (t) => {
    const rocks = await rocksIn(t)
    const store = createRocksEventStore(rocks)
    const events = sameMs(BASE, 3)
    await store.insertEvents(events)
    const [value] = rocks.writes[0].flatMap((op) => (op.type === 'put' && op.key.startsWith('E') ? [op.value] : []))
    t.same(value.toString().split('\n'), [
      '{"name":"app/burst","env":"production","receivedAt":' + BASE + ',"source":{"kind":"api"}}',
      ...events.map((e, i) => `${e.internalId}{"data":{"i":${i}}}`),
    ])
    const index = rocks.writes[0].flatMap((op) => (op.type === 'put' && op.key.startsWith('N') ? [op.value] : []))
    t.same(
      index.map((v) => v.toString()),
      [`=${BASE},${events.map((e) => e.internalId).join(',')}`],
      'and an index value states their receive time once',
    )
    // A caller's ID is usually one event's: its value is that event's entry, under a key without a digest.
    rocks.writes = []
    const [a, b] = sameMs(BASE + 1, 2)
    await store.insertEvents([{ ...a, id: 'order-1' }, b])
    const byId = rocks.writes[0].flatMap((op) => (op.type === 'put' && op.key.startsWith('I') ? [op] : []))
    t.same(
      byId.map((op) => [op.key.slice(-34), op.value.toString()]),
      [[`${a.internalId}........`, `${a.internalId}${BASE + 1}`]],
    )
    t.same((await store.queryEvents({ id: 'order-1', limit: 5 })).events, [{ ...a, id: 'order-1' }])
  },
)

t.test("an event is found by its ID, not by another event's data that holds that ID", async (t) => {
  const rocks = await rocksIn(t)
  const store = createRocksEventStore(rocks)
  const [a, b, c] = sameMs(BASE, 3)
  const events = [{ ...a, data: { next: b.internalId, text: `line\n${c.internalId}` } }, b, c]
  await store.insertEvents(events)
  t.equal(
    rocks.writes[0].filter((op) => op.type === 'put' && op.key.startsWith('E')).length,
    1,
    'one value holds the three',
  )
  for (const e of events) t.same(await store.getEvent(e.internalId), e, `event ${e.internalId}`)
})
