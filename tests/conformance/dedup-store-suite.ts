// The DedupStore contract, run against every adapter.
import type { Test } from 'tap'
import type { DedupStore } from '../../dedup/types.ts'
import { newUlid, newUlids } from '../../core/ids.ts'

export function dedupStoreSuite(
  t: Test,
  name: string,
  open: (windowMs: number) => Promise<{ store: DedupStore; close(): Promise<void> }>,
): void {
  t.test(`${name}: an id is seen within the window, per environment`, async (t) => {
    const f = await open(60_000)
    t.teardown(() => f.close())
    const now = 1_800_000_000_000
    t.same(await f.store.lookup([{ env: 'production', id: 'a', receivedAt: now }]), [null])
    await f.store.markSeen([{ env: 'production', id: 'a', receivedAt: now, internalId: 'FIRST' }])
    t.same(
      await f.store.lookup([
        { env: 'production', id: 'a', receivedAt: now + 59_999 },
        { env: 'staging', id: 'a', receivedAt: now + 1 },
        { env: 'production', id: 'b', receivedAt: now + 1 },
      ]),
      ['FIRST', null, null],
    )
    t.same(await f.store.lookup([{ env: 'production', id: 'a', receivedAt: now + 60_000 }]), [null], 'window is over')
  })

  t.test(
    `${name}: an id first seen just after a bucket boundary is found from just before it (ingest clock skew)`,
    async (t) => {
      const f = await open(600_000)
      t.teardown(() => f.close())
      const boundary = 1_800_000_000_000 - (1_800_000_000_000 % 600_000) + 600_000
      await f.store.markSeen([{ env: 'e', id: 'skew', receivedAt: boundary + 100, internalId: 'LATER-NODE' }])
      t.same(await f.store.lookup([{ env: 'e', id: 'skew', receivedAt: boundary - 100 }]), ['LATER-NODE'])
      t.same(
        await f.store.lookup([{ env: 'e', id: 'skew', receivedAt: boundary + 300_000 }]),
        ['LATER-NODE'],
        'and from later in its own bucket',
      )
    },
  )

  t.test(`${name}: an event without a caller id is a repeat of a later one whose id is its internal ID`, async (t) => {
    const f = await open(60_000)
    t.teardown(() => f.close())
    const now = 1_800_000_000_000
    // Its internal ID is its dedup key (core/event.ts): an export of it re-sent with that `id`.
    const internalId = newUlid(now)
    await f.store.markSeen([{ env: 'production', id: internalId, receivedAt: now, internalId }])
    t.same(
      await f.store.lookup([
        { env: 'production', id: internalId, receivedAt: now + 1_000 },
        { env: 'staging', id: internalId, receivedAt: now + 1_000 },
        { env: 'production', id: internalId.toLowerCase(), receivedAt: now + 1_000 },
      ]),
      [internalId, null, null],
    )
    await f.store.expire(now + 120_000)
    t.same(await f.store.lookup([{ env: 'production', id: internalId, receivedAt: now + 1_000 }]), [null], 'expired')
  })

  t.test(`${name}: events without a caller id, marked in batches that share a millisecond`, async (t) => {
    const f = await open(60_000)
    t.teardown(() => f.close())
    const now = 1_800_000_000_000
    // One millisecond's IDs (newUlids makes them in order), over two batches and two environments,
    // with a caller id's mark between them.
    const ids = newUlids(6, now)
    t.ok(
      ids.every((id) => id.slice(0, 10) === ids[0].slice(0, 10)),
      'one millisecond',
    )
    const seen = (id: string, env = 'production', receivedAt = now) => ({ env, id, receivedAt, internalId: id })
    await f.store.markSeen([seen(ids[0]), seen(ids[1]), seen(ids[2], 'staging')])
    await f.store.markSeen([
      seen(ids[3]),
      { env: 'production', id: 'order-1', receivedAt: now, internalId: ids[4] },
      seen(ids[5], 'production', now + 5),
    ])
    const ask = (id: string, env = 'production') => ({ env, id, receivedAt: now + 1_000 })
    t.same(
      await f.store.lookup([ask(ids[0]), ask(ids[1]), ask(ids[3]), ask(ids[5]), ask(ids[2], 'staging')]),
      [ids[0], ids[1], ids[3], ids[5], ids[2]],
      "each is found, the first batch's too",
    )
    t.same(
      await f.store.lookup([ask(ids[2]), ask(ids[4]), ask(ids[0], 'staging'), ask(newUlid(now))]),
      [null, null, null, null],
      "not in another environment, not a caller id's internal ID, not an ID of the same millisecond never marked",
    )
    t.same(await f.store.lookup([ask('order-1')]), [ids[4]], 'the caller id between them')
    t.same(
      await f.store.lookup([{ env: 'production', id: ids[5], receivedAt: now + 5 + 60_000 }]),
      [null],
      'each member keeps its own receive time',
    )
  })

  t.test(`${name}: expiry drops whole old buckets and keeps recent keys`, async (t) => {
    const f = await open(1000)
    t.teardown(() => f.close())
    await f.store.markSeen([
      { env: 'e', id: 'old', receivedAt: 10_000, internalId: 'OLD' },
      { env: 'e', id: 'new', receivedAt: 20_500, internalId: 'NEW' },
    ])
    await f.store.expire(20_600)
    t.same(await f.store.lookup([{ env: 'e', id: 'new', receivedAt: 20_600 }]), ['NEW'])
    t.same(await f.store.lookup([{ env: 'e', id: 'old', receivedAt: 10_100 }]), [null], 'expired bucket is gone')
  })
}
