// Erasure in the embedded store (store/erasure-types.ts): the environment's events are read
// newest first through its env index (G), a page at a time, and matched in memory; their runs
// are found by the run index by event (Re), and their requests by their source. Deleting removes
// the events by rewriting their milliseconds (rocksdb-remove.ts) and the runs' and requests'
// documents with their index entries, so no index leads to what is gone.
import { keyRange } from '../core/keyspaces.ts'
import type { Rocks, WriteOp } from '../core/rocks.ts'
import { matchesTarget, requestOf, type ErasureBatch, type ErasureStore } from './erasure-types.ts'
import { readEvents } from './rocksdb-events.ts'
import { indexEntries, keyPart } from './rocksdb-index.ts'
import { removeEvents } from './rocksdb-remove.ts'
import { runDeleteOps } from './runs-rocksdb.ts'
import { requestDeleteOps } from './requests-rocksdb.ts'
import type { RunDoc } from './runs-types.ts'
import type { WebhookRequestRecord } from './requests-types.ts'

export function createRocksErasure(rocks: Rocks): ErasureStore {
  return {
    async find(target, limit, cursor) {
      const { gte, lt } = keyRange('eventsByEnv', keyPart(target.env))
      const ids: string[] = []
      for await (const entry of indexEntries(rocks, gte, lt, cursor === null ? {} : { below: cursor })) {
        ids.push(entry.internalId)
        if (ids.length === limit) break
      }
      const found = await readEvents(rocks, ids)
      const events = ids.flatMap((id) => {
        const event = found.get(id)
        return event && event.env === target.env && matchesTarget(event, target) ? [event] : []
      })
      const runs = new Set<string>()
      for (const event of events) {
        const { gte, lt } = keyRange('runsByEvent', `${event.internalId}\0`)
        for await (const { key } of rocks.scan({ gte, lt })) runs.add(key.slice(gte.length))
      }
      const requests = new Map(
        events.flatMap((e) => {
          const r = requestOf(e)
          return r ? [[`${r.webhookId}\0${r.requestId}`, r] as const] : []
        }),
      )
      return {
        batch: { events: events.map((e) => e.internalId), runs: [...runs], requests: [...requests.values()] },
        next: ids.length < limit ? null : ids[ids.length - 1],
      }
    },

    async erase(batch: ErasureBatch) {
      await removeEvents(rocks, batch.events)
      const ops: WriteOp[] = []
      const runs = await rocks.getMany(batch.runs.map((id) => keyRange('runs', id).gte))
      for (const value of runs) if (value) ops.push(...runDeleteOps(JSON.parse(value.toString()) as RunDoc))
      const requestKeys = batch.requests.map((r) => keyRange('webhookRequests', `${r.webhookId}\0${r.requestId}`).gte)
      for (const value of await rocks.getMany(requestKeys))
        if (value) ops.push(...requestDeleteOps(JSON.parse(value.toString()) as WebhookRequestRecord))
      await rocks.write(ops)
    },
  }
}
