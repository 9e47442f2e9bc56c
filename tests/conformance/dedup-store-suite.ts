// The DedupStore contract, run against every adapter.
import type { Test } from 'tap'
import type { DedupStore } from '../../dedup/types.ts'

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
