// The ControlStore contract, run against every adapter.
import type { Test } from 'tap'
import type { ControlStore } from '../../control/types.ts'

export interface ControlFixture {
  store: ControlStore /** Another view of the same control plane (restart, or another node). */
  reopen(): Promise<ControlStore>
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
    const other = await f.reopen()
    t.same(
      other
        .list('env')
        .map((e) => e.name)
        .sort(),
      ['feature-x', 'staging'],
    )
    t.equal(other.get('key', 'nope'), undefined)
  })
}
