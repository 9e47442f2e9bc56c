// WaitStore on RocksDB, per scope (the embedded node's one scope, or a partition's):
//   `M<scope>\0<matchKey>\0<waitId>` → registration JSON   (an event's candidates: one prefix scan)
//   `Y<scope>\0<expiresAt hex12>\0<waitId>` → ''           (expiry, by time)
//   `Z<scope>\0<waitId>` → `<expiresAt hex12>\0<matchKey>` (forgetting a wait by its ID)
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { keyPrefix, keyRange } from '../core/keyspaces.ts'
import { matchKey, type WaitRegistration } from './waits-types.ts'
import type { WaitStore } from './waits-store.ts'

const hex12 = (n: number) => Math.max(0, Math.min(n, 0xffffffffffff)).toString(16).padStart(12, '0')

/**
 * `open` keeps, in memory, how many waits each match key has: an event whose key has none (most
 * events) is answered without reading RocksDB. Read back from the store when it opens.
 */
export async function createRocksWaitStore(rocks: Rocks, scope: string): Promise<WaitStore> {
  const byKey = keyPrefix('waits', `${scope}\0`)
  const byExpiry = keyPrefix('waitsByExpiry', `${scope}\0`)
  const byId = keyPrefix('waitsById', `${scope}\0`)
  const open = new Map<string, number>()
  const count = (key: string, by: number) => {
    const n = (open.get(key) ?? 0) + by
    if (n > 0) open.set(key, n)
    else open.delete(key)
  }
  for await (const { value } of rocks.scan({ ...keyRange('waitsById', `${scope}\0`), batch: 1024 })) {
    const entry = value.toString()
    count(entry.slice(entry.indexOf('\0') + 1), 1)
  }

  return {
    async find(key) {
      if (!open.has(key)) return []
      const waits: WaitRegistration[] = []
      for await (const { value } of rocks.scan(keyRange('waits', `${scope}\0${key}\0`)))
        waits.push(JSON.parse(value.toString()) as WaitRegistration)
      return waits
    },
    async apply({ put, remove }) {
      const ops: WriteOp[] = []
      const index = await rocks.getMany(remove.map((id) => byId + id))
      const counted: Array<[string, number]> = []
      remove.forEach((waitId, i) => {
        const entry = index[i]?.toString()
        if (entry === undefined) return
        const at = entry.indexOf('\0')
        counted.push([entry.slice(at + 1), -1])
        ops.push(
          { type: 'del', key: `${byKey}${entry.slice(at + 1)}\0${waitId}` },
          { type: 'del', key: `${byExpiry}${entry.slice(0, at)}\0${waitId}` },
          { type: 'del', key: byId + waitId },
        )
      })
      const known = await rocks.getMany(put.map((w) => byId + w.waitId))
      put.forEach((wait, i) => {
        if (!known[i]) counted.push([matchKey(wait), 1])
      })
      for (const wait of put) {
        const key = matchKey(wait)
        const expires = hex12(wait.expiresAt)
        ops.push(
          { type: 'put', key: `${byKey}${key}\0${wait.waitId}`, value: JSON.stringify(wait) },
          { type: 'put', key: `${byExpiry}${expires}\0${wait.waitId}`, value: '' },
          { type: 'put', key: byId + wait.waitId, value: `${expires}\0${key}` },
        )
      }
      await rocks.write(ops)
      for (const [key, by] of counted) count(key, by)
    },
    async expired(nowMs, limit) {
      const ids: string[] = []
      const upTo = `${byExpiry}${hex12(nowMs + 1)}`
      for await (const { key } of rocks.scan({ gte: byExpiry, lt: upTo, limit }))
        ids.push(key.slice(byExpiry.length + 13))
      return ids
    },
    close: async () => {},
  }
}

/** Every registration of `scope` (what a changelog restores, or re-writes). */
export async function* allWaits(rocks: Rocks, scope: string): AsyncIterable<WaitRegistration> {
  for await (const { value } of rocks.scan({ ...keyRange('waits', `${scope}\0`), batch: 256 }))
    yield JSON.parse(value.toString()) as WaitRegistration
}
