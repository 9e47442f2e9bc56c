// The WaitStore of one partition of `waits` in distributed mode: the local RocksDB store under a
// per-partition scope, backed by a compacted changelog (`waits-state`, partitioned as `waits`): whoever
// is assigned partition N clears what its disk held for N and restores from partition N of the
// changelog, so a matcher replaced with an empty disk loses no open wait. Keys are wait IDs; a
// tombstone forgets one. The topic is compacted only (no retention): a wait may stay open a year.
import type { Logger } from 'pino'
import type { Bus } from '../bus/types.ts'
import type { Rocks } from '../core/rocks.ts'
import { deleteRange } from '../core/keyspaces.ts'
import type { WaitRegistration } from './waits-types.ts'
import type { WaitStore } from './waits-store.ts'
import { createRocksWaitStore } from './waits-rocksdb.ts'

export interface ChangelogWaitOptions {
  rocks: Rocks
  bus: Bus
  topic: string
  partition: number
  log: Logger
}

export async function openChangelogWaitStore(options: ChangelogWaitOptions): Promise<WaitStore> {
  const { rocks, bus, topic, partition } = options
  const scope = `p${partition}`
  await rocks.write([
    deleteRange('waits', `${scope}\0`),
    deleteRange('waitsByExpiry', `${scope}\0`),
    deleteRange('waitsById', `${scope}\0`),
  ])
  const local = await createRocksWaitStore(rocks, scope)
  const latest = new Map<string, Buffer>()
  await bus.readPartition(topic, partition, async (records) => {
    for (const r of records) latest.set(r.key, r.value)
  })
  const put = [...latest.values()].filter((v) => v.length > 0).map((v) => JSON.parse(v.toString()) as WaitRegistration)
  await local.apply({ put, remove: [] })
  options.log.info({ topic, partition, waits: put.length }, 'wait matcher partition restored from its changelog')

  return {
    findMany: (keys) => local.findMany(keys),
    async apply(change) {
      const records = [
        ...change.remove.map((waitId) => ({ key: waitId, value: '', partition })),
        ...change.put.map((w) => ({ key: w.waitId, value: JSON.stringify(w), partition })),
      ]
      // Both before the matcher commits its batch; a failure redelivers the batch.
      await Promise.all([records.length > 0 ? bus.publish(topic, records) : null, local.apply(change)])
    },
    expired: (nowMs, limit) => local.expired(nowMs, limit),
    close: () => local.close(),
  }
}
