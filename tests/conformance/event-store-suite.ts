// The EventStore contract, run against every adapter (RocksDB; ClickHouse against a real server).
import type { Test } from 'tap'
import type { StoredEvent } from '../../core/event.ts'
import { newUlid } from '../../core/ids.ts'
import type { EventStore } from '../../store/types.ts'

export interface EventStoreFixture { store: EventStore; close(): Promise<void> }

function event(overrides: Partial<StoredEvent> = {}): StoredEvent {
  const internalId = overrides.internalId ?? newUlid()
  return { internalId, id: internalId, name: 'app/thing.happened', data: { n: 1, nested: { ok: true } }, ts: 1_700_000_000_000, env: 'production', receivedAt: Date.now(), source: { kind: 'api' }, ...overrides }
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
    const events = Array.from({ length: 5 }, (_, i) => event({ name: `q/${tag}`, env: i % 2 ? 'staging' : 'production', receivedAt: base + i }))
    await f.store.insertEvents(events)
    const all = await f.store.queryEvents({ name: `q/${tag}`, limit: 10 })
    t.same(all.events.map((e) => e.internalId), events.map((e) => e.internalId).reverse(), 'newest first')
    t.equal(all.nextCursor, null)
    const page1 = await f.store.queryEvents({ name: `q/${tag}`, limit: 2 })
    t.equal(page1.events.length, 2)
    t.ok(page1.nextCursor)
    const page2 = await f.store.queryEvents({ name: `q/${tag}`, limit: 2, cursor: page1.nextCursor! })
    const page3 = await f.store.queryEvents({ name: `q/${tag}`, limit: 2, cursor: page2.nextCursor! })
    t.same([...page1.events, ...page2.events, ...page3.events].map((e) => e.internalId), all.events.map((e) => e.internalId), 'pages cover everything once')
    t.equal(page3.nextCursor, null)
    t.same((await f.store.queryEvents({ name: `q/${tag}`, env: 'staging', limit: 10 })).events.map((e) => e.env), ['staging', 'staging'])
    const timed = await f.store.queryEvents({ name: `q/${tag}`, receivedAfter: base + 1, receivedBefore: base + 4, limit: 10 })
    t.same(timed.events.map((e) => e.receivedAt), [base + 3, base + 2])
    const byId = await f.store.queryEvents({ id: events[2].id, limit: 10 })
    t.same(byId.events.map((e) => e.internalId), [events[2].internalId])
  })

  t.test(`${name}: duplicates are kept with duplicateOf and left out of listings unless asked`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const id = 'order-' + newUlid()
    const original = event({ id })
    const duplicate = event({ id, duplicateOf: original.internalId })
    await f.store.insertEvents([original, duplicate])
    t.equal((await f.store.getEvent(duplicate.internalId))?.duplicateOf, original.internalId)
    t.same((await f.store.queryEvents({ id, limit: 10 })).events.map((e) => e.internalId), [original.internalId])
    t.equal((await f.store.queryEvents({ id, limit: 10, includeDuplicates: true })).events.length, 2)
  })
}
