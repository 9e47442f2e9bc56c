// The ControlStore contract, run against every adapter.
import type { Test } from 'tap'
import type { ControlStore } from '../../control/types.ts'

export interface ControlFixture {
  store: ControlStore /** Another view of the same control plane (restart, or another node). */
  reopen(): Promise<ControlStore>
  /** A second view open at once (another node); absent where one process holds the store. */
  peer?(): Promise<ControlStore>
  close(): Promise<void>
}

export function controlStoreSuite(t: Test, name: string, open: () => Promise<ControlFixture>): void {
  t.test(`${name}: put, get, list, delete, and a new view sees the same documents`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    await f.store.put('env', 'staging', { name: 'staging', kind: 'standard', createdAt: 1 })
    await f.store.put('env', 'feature-x', { name: 'feature-x', kind: 'branch', createdAt: 2 })
    await f.store.put('env', 'gone', { name: 'gone', kind: 'standard', createdAt: 3 })
    await f.store.delete('env', 'gone')
    t.same(f.store.get('env', 'staging'), { name: 'staging', kind: 'standard', createdAt: 1 })
    t.equal(f.store.get('env', 'gone'), undefined)
    t.same(
      f.store
        .list('env')
        .map((e) => e.name)
        .sort(),
      ['feature-x', 'staging'],
    )
    const other = f.peer ? await f.peer() : f.store
    t.same(
      other
        .list('env')
        .map((e) => e.name)
        .sort(),
      ['feature-x', 'staging'],
    )
    t.equal(other.get('key', 'nope'), undefined)
  })

  t.test(`${name}: putIf, concurrently from two views, takes exactly one write per document state`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const other = f.peer ? await f.peer() : f.store
    const env = (createdAt: number) => ({ name: 'race', kind: 'standard' as const, createdAt })
    t.equal(await f.store.putIf('env', 'race', env(1), undefined), true, 'none expected, none there')
    t.equal(await f.store.putIf('env', 'race', env(2), undefined), false, 'one is there now')
    t.equal(f.store.get('env', 'race')?.createdAt, 1, 'nothing changed')
    // Each writer adds one to the count its view holds, only if no other write came first.
    const writers = [f.store, other]
    const taken: number[] = []
    await Promise.all(
      writers.map(async (store, w) => {
        for (let i = 0; i < 6; i++) {
          for (;;) {
            const current = store.get('env', 'race')
            const next = (current?.createdAt ?? 0) + 1
            if (current && (await store.putIf('env', 'race', { ...env(next), name: `race-${w}` }, current))) {
              taken.push(next)
              break
            }
            await new Promise((resolve) => setTimeout(resolve, 1))
          }
        }
      }),
    )
    t.same(
      taken.sort((a, b) => a - b),
      [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
      'no two writes took the same count, none was lost',
    )
    t.equal(f.store.get('env', 'race')?.createdAt, 13)
    const late = await f.reopen()
    t.equal(late.get('env', 'race')?.createdAt, 13, 'a view opened afterwards holds the winner')
  })
}
