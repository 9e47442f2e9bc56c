// The EventStore contract, run against every adapter (RocksDB; ClickHouse against a real server).
import type { Test } from 'tap'
import type { StoredEvent } from '../../core/event.ts'
import { newIdSeed, newUlid, newUlids, seededUlids } from '../../core/ids.ts'
import type { EventQuery, EventStore } from '../../store/types.ts'

/** An internal ID of time `ms` (newUlid never goes back in time within a process). */
const idAt = (ms: number) => seededUlids(newIdSeed(ms), 1)[0]

export interface EventStoreFixture {
  store: EventStore
  close(): Promise<void>
}

/**
 * Every event a query matches, by following its cursors. A page holds at most `limit` events and
 * may hold fewer, even none, with a cursor (an adapter may bound what one page reads): only a null
 * cursor ends the listing.
 */
async function everyPage(store: EventStore, q: EventQuery): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = []
  let pages = 0
  for (let cursor: string | undefined; ; pages++) {
    const page = await store.queryEvents({ ...q, ...(cursor !== undefined && { cursor }) })
    if (page.events.length > q.limit) throw new Error(`a page of ${page.events.length} events for limit ${q.limit}`)
    ids.push(...page.events.map((e) => e.internalId))
    if (page.nextCursor === null) return { ids, pages: pages + 1 }
    if (page.nextCursor === cursor) throw new Error('the cursor did not move')
    cursor = page.nextCursor
  }
}

function event(overrides: Partial<StoredEvent> = {}): StoredEvent {
  const internalId = overrides.internalId ?? newUlid()
  return {
    internalId,
    id: internalId,
    name: 'app/thing.happened',
    data: { n: 1, nested: { ok: true } },
    ts: 1_700_000_000_000,
    env: 'production',
    receivedAt: Date.now(),
    source: { kind: 'api' },
    ...overrides,
  }
}

export function eventStoreSuite(t: Test, name: string, open: () => Promise<EventStoreFixture>): void {
  t.test(`${name}: an inserted event reads back equal, by internal ID`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const e = event({ source: { kind: 'webhook', webhookId: 'wh_x', requestId: 'r1' } })
    await f.store.insertEvents([e])
    t.same(await f.store.getEvent(e.internalId), e)
    t.equal(await f.store.getEvent(newUlid()), null, 'unknown id → null')
  })

  t.test(`${name}: inserting the same event twice stores it once`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const e = event({ id: 'dup-check-' + newUlid() })
    await f.store.insertEvents([e])
    await f.store.insertEvents([e, e])
    const page = await f.store.queryEvents({ id: e.id, limit: 10 })
    t.equal(page.events.length, 1)
  })

  t.test(`${name}: queries filter by id, name, env and receive time, newest first, with a cursor`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const tag = newUlid()
    const base = Date.now()
    const events = Array.from({ length: 5 }, (_, i) =>
      event({ name: `q/${tag}`, env: i % 2 ? 'staging' : 'production', receivedAt: base + i }),
    )
    await f.store.insertEvents(events)
    const all = await f.store.queryEvents({ name: `q/${tag}`, limit: 10 })
    t.same(
      all.events.map((e) => e.internalId),
      events.map((e) => e.internalId).reverse(),
      'newest first',
    )
    t.equal(all.nextCursor, null)
    const page1 = await f.store.queryEvents({ name: `q/${tag}`, limit: 2 })
    t.equal(page1.events.length, 2)
    t.ok(page1.nextCursor)
    const page2 = await f.store.queryEvents({ name: `q/${tag}`, limit: 2, cursor: page1.nextCursor! })
    const page3 = await f.store.queryEvents({ name: `q/${tag}`, limit: 2, cursor: page2.nextCursor! })
    t.same(
      [...page1.events, ...page2.events, ...page3.events].map((e) => e.internalId),
      all.events.map((e) => e.internalId),
      'pages cover everything once',
    )
    t.equal(page3.nextCursor, null)
    t.same(
      (await f.store.queryEvents({ name: `q/${tag}`, env: 'staging', limit: 10 })).events.map((e) => e.env),
      ['staging', 'staging'],
    )
    const timed = await f.store.queryEvents({
      name: `q/${tag}`,
      receivedAfter: base + 1,
      receivedBefore: base + 4,
      limit: 10,
    })
    t.same(
      timed.events.map((e) => e.receivedAt),
      [base + 3, base + 2],
    )
    const byId = await f.store.queryEvents({ id: events[2].id, limit: 10 })
    t.same(
      byId.events.map((e) => e.internalId),
      [events[2].internalId],
    )
  })

  t.test(`${name}: duplicates are kept with duplicateOf and left out of listings unless asked`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const id = 'order-' + newUlid()
    const original = event({ id })
    const duplicate = event({ id, duplicateOf: original.internalId })
    await f.store.insertEvents([original, duplicate])
    t.equal((await f.store.getEvent(duplicate.internalId))?.duplicateOf, original.internalId)
    t.same(
      (await f.store.queryEvents({ id, limit: 10 })).events.map((e) => e.internalId),
      [original.internalId],
    )
    t.equal((await f.store.queryEvents({ id, limit: 10, includeDuplicates: true })).events.length, 2)
  })

  t.test(`${name}: every filter and combination lists exactly its events, newest first, page by page`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const base = Date.now() - 3_600_000
    const names = ['shop/order', 'shop/order.paid', 'shop/orde\u{1F7FF}', 'shop/order\0x']
    const envs = ['production', 'staging']
    // 48 events, one a millisecond, over 4 names × 2 envs; every fifth one a duplicate of the one before.
    const events: StoredEvent[] = Array.from({ length: 48 }, (_, i) =>
      event({
        internalId: idAt(base + i),
        id: `order-${i % 12}`,
        name: names[i % 4],
        env: envs[Math.floor(i / 4) % 2],
        receivedAt: base + i,
        ...(i % 5 === 4 && { duplicateOf: 'x' }),
      }),
    )
    for (const e of events) if (e.duplicateOf) e.duplicateOf = events[events.indexOf(e) - 1].internalId
    await f.store.insertEvents(events.slice(0, 20))
    await f.store.insertEvents(events.slice(20))
    const queries: Array<Omit<EventQuery, 'limit'>> = [
      {},
      { includeDuplicates: true },
      { name: names[0] },
      { name: names[3] },
      { name: 'shop/ord' },
      { env: 'staging' },
      { env: 'nope' },
      { name: names[1], env: 'production' },
      { name: names[2], env: 'staging', includeDuplicates: true },
      { id: 'order-3' },
      { id: 'order-3', includeDuplicates: true },
      { id: 'order-3', env: 'staging' },
      { id: 'order-4', name: names[0] },
      { id: 'order-4', name: names[1] },
      { id: 'order' },
      { receivedAfter: base + 30 },
      { receivedBefore: base + 7 },
      { receivedAfter: base + 9, receivedBefore: base + 21 },
      { name: names[0], receivedAfter: base + 10, receivedBefore: base + 40 },
      { env: 'production', receivedAfter: base + 12, includeDuplicates: true },
      { name: names[1], env: 'staging', receivedBefore: base + 30 },
      { id: 'order-7', receivedAfter: base + 7 },
      { receivedAfter: Date.now() + 86_400_000 },
      { receivedBefore: base },
      { receivedAfter: base + 5, receivedBefore: base + 6 },
    ]
    const newestFirst = [...events].reverse()
    for (const q of queries) {
      const expected = newestFirst
        .filter(
          (e) =>
            (q.id === undefined || e.id === q.id) &&
            (q.name === undefined || e.name === q.name) &&
            (q.env === undefined || e.env === q.env) &&
            (q.receivedAfter === undefined || e.receivedAt > q.receivedAfter) &&
            (q.receivedBefore === undefined || e.receivedAt < q.receivedBefore) &&
            (q.includeDuplicates === true || e.duplicateOf === undefined),
        )
        .map((e) => e.internalId)
      const label = JSON.stringify(q).replaceAll(String(base), 'base')
      t.same((await everyPage(f.store, { ...q, limit: 1000 })).ids, expected, `${label}: in one listing`)
      t.same((await everyPage(f.store, { ...q, limit: 3 })).ids, expected, `${label}: in pages of 3`)
    }
  })

  t.test(`${name}: a full last page has no cursor; a page with more after it has its last event's`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const ids = newUlids(4)
    await f.store.insertEvents(ids.map((internalId) => event({ internalId, name: 'page/exact' })))
    const first = await f.store.queryEvents({ name: 'page/exact', limit: 2 })
    t.same(
      first.events.map((e) => e.internalId),
      [ids[3], ids[2]],
    )
    t.equal(first.nextCursor, ids[2])
    const second = await f.store.queryEvents({ name: 'page/exact', limit: 2, cursor: ids[2] })
    t.same(
      second.events.map((e) => e.internalId),
      [ids[1], ids[0]],
    )
    t.equal(second.nextCursor, null)
  })

  t.test(`${name}: receive-time filters find events whose IDs carry another time, still in ID order`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const now = Date.now()
    // IDs made hours before or after receipt: a client's ID seed, a step retried long after its run began.
    const onTime = event({ internalId: idAt(now - 10_000), receivedAt: now - 10_000, name: 'clock/x' })
    const early = event({ internalId: idAt(now - 5 * 3_600_000), receivedAt: now - 5_000, name: 'clock/x' })
    const late = event({ internalId: idAt(now + 3 * 3_600_000), receivedAt: now - 20_000, name: 'clock/y' })
    const old = event({ internalId: idAt(now - 4 * 3_600_000), receivedAt: now - 4 * 3_600_000, name: 'clock/x' })
    await f.store.insertEvents([onTime, early, late, old])
    const ids = async (q: Omit<EventQuery, 'limit'>) => (await everyPage(f.store, { ...q, limit: 1 })).ids
    t.same(
      await ids({ receivedAfter: now - 60_000 }),
      [late, onTime, early].map((e) => e.internalId),
    )
    t.same(
      await ids({ receivedAfter: now - 60_000, name: 'clock/x' }),
      [onTime, early].map((e) => e.internalId),
    )
    t.same(
      await ids({ receivedAfter: now - 15_000, receivedBefore: now }),
      [onTime, early].map((e) => e.internalId),
    )
    t.same(await ids({ receivedBefore: now - 3_600_000 }), [old.internalId])
    t.same(await ids({ receivedBefore: now - 3_600_000, env: 'production' }), [old.internalId])
    t.same(await ids({ receivedAfter: now }), [])
  })
}
