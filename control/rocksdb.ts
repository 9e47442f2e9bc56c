// ControlStore on the embedded RocksDB: `C<kind>\0<id>` → JSON (core/keyspaces.ts), all loaded at open.
import type { Rocks } from '../core/rocks.ts'
import type { ControlDocs, ControlKind, ControlStore } from './types.ts'
import { keyPrefix, keyRange } from '../core/keyspaces.ts'

export async function createRocksControlStore(rocks: Rocks): Promise<ControlStore> {
  const docs = new Map<ControlKind, Map<string, unknown>>()
  const kindMap = (kind: ControlKind) => docs.get(kind) ?? docs.set(kind, new Map()).get(kind)!
  for await (const { key, value } of rocks.scan(keyRange('control'))) {
    const [kind, id] = key.slice(keyPrefix('control').length).split('\0') as [ControlKind, string]
    kindMap(kind).set(id, JSON.parse(value.toString()))
  }
  async function put(kind: ControlKind, id: string, doc: unknown): Promise<void> {
    await rocks.write([{ type: 'put', key: keyPrefix('control', `${kind}\0${id}`), value: JSON.stringify(doc) }])
    kindMap(kind).set(id, doc)
  }
  // Compare-and-sets one after another: the comparison and the write it allows are one step.
  let casQueue: Promise<unknown> = Promise.resolve()

  return {
    get: <K extends ControlKind>(kind: K, id: string) => kindMap(kind).get(id) as ControlDocs[K] | undefined,
    list: <K extends ControlKind>(kind: K) => [...kindMap(kind).values()] as Array<ControlDocs[K]>,
    put,
    putIf(kind, id, doc, expected) {
      const done = casQueue.then(async () => {
        if (kindMap(kind).get(id) !== expected) return false
        await put(kind, id, doc)
        return true
      })
      casQueue = done.catch(() => {})
      return done
    },
    async delete(kind, id) {
      await rocks.write([{ type: 'del', key: keyPrefix('control', `${kind}\0${id}`) }])
      kindMap(kind).delete(id)
    },
    close: async () => {},
  }
}
