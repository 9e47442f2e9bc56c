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
 * `open` keeps, in memory, the IDs of the waits under each match key (read back when the store opens):
 * an event whose key has none (most events) is answered without reading RocksDB, and one whose key
 * has some with one multi-get of exactly those entries. A prefix scan would step over every matched
 * and removed wait that compaction has not dropped yet, in and after the key's range (rocksdb-native
 * sets no upper bound on its iterators).
 */
export async function createRocksWaitStore(rocks: Rocks, scope: string): Promise<WaitStore> {
  const byKey = keyPrefix('waits', `${scope}\0`)
  const byExpiry = keyPrefix('waitsByExpiry', `${scope}\0`)
  const byId = keyPrefix('waitsById', `${scope}\0`)
  const open = new Map<string, string[]>()
  const add = (key: string, waitId: string) => {
    const ids = open.get(key)
    if (!ids) return void open.set(key, [waitId])
    let at = ids.length
    while (at > 0 && ids[at - 1] > waitId) at--
    if (ids[at - 1] !== waitId) ids.splice(at, 0, waitId)
  }
  const drop = (key: string, waitId: string) => {
    const ids = open.get(key)
    const at = ids?.indexOf(waitId) ?? -1
    if (at < 0) return
    ids!.splice(at, 1)
    if (ids!.length === 0) open.delete(key)
  }
  for await (const { key, value } of rocks.scan({ ...keyRange('waitsById', `${scope}\0`), batch: 1024 })) {
    const entry = value.toString()
    add(entry.slice(entry.indexOf('\0') + 1), key.slice(byId.length))
  }

  return {
    async findMany(keys) {
      const refs = [...new Set(keys)].flatMap((key) => (open.get(key) ?? []).map((waitId) => ({ key, waitId })))
      const found = new Map<string, WaitRegistration[]>()
      if (refs.length === 0) return found
      const values = await rocks.getMany(refs.map((r) => `${byKey}${r.key}\0${r.waitId}`))
      refs.forEach(({ key }, i) => {
        const value = values[i]
        if (value)
          (found.get(key) ?? found.set(key, []).get(key)!).push(JSON.parse(value.toString()) as WaitRegistration)
      })
      return found
    },
    async apply({ put, remove }) {
      const ops: WriteOp[] = []
      const index = await rocks.getMany(remove.map((id) => byId + id))
      const dropped: Array<[string, string]> = []
      const added: Array<[string, string]> = []
      remove.forEach((waitId, i) => {
        const entry = index[i]?.toString()
        if (entry === undefined) return
        const at = entry.indexOf('\0')
        dropped.push([entry.slice(at + 1), waitId])
        ops.push(
          { type: 'del', key: `${byKey}${entry.slice(at + 1)}\0${waitId}` },
          { type: 'del', key: `${byExpiry}${entry.slice(0, at)}\0${waitId}` },
          { type: 'del', key: byId + waitId },
        )
      })
      const known = await rocks.getMany(put.map((w) => byId + w.waitId))
      put.forEach((wait, i) => {
        if (!known[i]) added.push([matchKey(wait), wait.waitId])
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
      for (const [key, waitId] of dropped) drop(key, waitId)
      for (const [key, waitId] of added) add(key, waitId)
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
