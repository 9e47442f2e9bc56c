// WebhookRequestStore on the embedded RocksDB. Keys: `W<webhookId>\0<requestId>` → record
// JSON; `X<webhookId>\0<status>\0<requestId>` → '' (the by-status index, one entry per
// request, moved when its status changes).
import type { Rocks, WriteOp } from '../core/rocks.ts'
import type { RequestPage, RequestQuery, WebhookRequestRecord, WebhookRequestStore } from './requests-types.ts'
import { deleteRange, keyPrefix, keyRange } from '../core/keyspaces.ts'

const recordKey = (webhookId: string, requestId: string) => keyPrefix('webhookRequests', `${webhookId}\0${requestId}`)
const statusPrefix = (webhookId: string, status: string) =>
  keyPrefix('webhookRequestsByStatus', `${webhookId}\0${status}\0`)

/** The deletes that take a stored webhook request and its index entry away (retention, erasure). */
export function requestDeleteOps(record: WebhookRequestRecord): WriteOp[] {
  const { webhookId, requestId } = record.request
  return [
    { type: 'del', key: recordKey(webhookId, requestId) },
    { type: 'del', key: statusPrefix(webhookId, record.status) + requestId },
  ]
}

export function createRocksRequestStore(rocks: Rocks): WebhookRequestStore {
  const parse = (value: Buffer) => JSON.parse(value.toString()) as WebhookRequestRecord

  async function get(webhookId: string, requestId: string): Promise<WebhookRequestRecord | null> {
    const value = await rocks.get(recordKey(webhookId, requestId))
    return value ? parse(value) : null
  }

  async function* candidates(q: RequestQuery): AsyncGenerator<WebhookRequestRecord> {
    if (q.status === undefined) {
      const { gte: prefix, lt: end } = keyRange('webhookRequests', `${q.webhookId}\0`)
      const range = q.oldestFirst
        ? { ...(q.cursor ? { gt: prefix + q.cursor } : { gte: prefix }), lt: end }
        : { gte: prefix, lt: q.cursor ? prefix + q.cursor : end, reverse: true }
      for await (const { value } of rocks.scan({ ...range, limit: q.limit + 1 })) yield parse(value)
      return
    }
    const prefix = statusPrefix(q.webhookId, q.status)
    const end = keyRange('webhookRequestsByStatus', `${q.webhookId}\0${q.status}\0`).lt
    const range = q.oldestFirst
      ? { ...(q.cursor ? { gt: prefix + q.cursor } : { gte: prefix }), lt: end }
      : { gte: prefix, lt: q.cursor ? prefix + q.cursor : end, reverse: true }
    const ids: string[] = []
    for await (const { key } of rocks.scan({ ...range, limit: q.limit + 1 })) ids.push(key.slice(prefix.length))
    const values = await rocks.getMany(ids.map((id) => recordKey(q.webhookId, id)))
    for (const value of values) if (value) yield parse(value)
  }

  return {
    async record(records) {
      // Several attempts of one request may share a batch: the newest wins there too.
      const newest = new Map<string, WebhookRequestRecord>()
      for (const r of records) {
        const key = recordKey(r.request.webhookId, r.request.requestId)
        const seen = newest.get(key)
        if (!seen || seen.request.attempt <= r.request.attempt) newest.set(key, r)
      }
      const keys = [...newest.keys()]
      const existing = await rocks.getMany(keys)
      const ops: WriteOp[] = []
      keys.forEach((key, i) => {
        const next = newest.get(key)!
        const before = existing[i] ? parse(existing[i]!) : null
        if (before && before.request.attempt > next.request.attempt) return
        const { webhookId, requestId } = next.request
        if (before && before.status !== next.status)
          ops.push({ type: 'del', key: statusPrefix(webhookId, before.status) + requestId })
        ops.push({ type: 'put', key, value: JSON.stringify(next) })
        ops.push({ type: 'put', key: statusPrefix(webhookId, next.status) + requestId, value: '' })
      })
      await rocks.write(ops)
    },
    get,
    async list(q): Promise<RequestPage> {
      const requests: WebhookRequestRecord[] = []
      for await (const record of candidates(q)) {
        if (requests.length === q.limit)
          return { requests, nextCursor: requests[requests.length - 1].request.requestId }
        requests.push(record)
      }
      return { requests, nextCursor: null }
    },
    async count(webhookId, status) {
      const { gte, lt } = keyRange('webhookRequestsByStatus', `${webhookId}\0${status}\0`)
      let n = 0
      for await (const _ of rocks.scan({ gte, lt, batch: 1024 })) n++
      return n
    },
    async removeWebhook(webhookId) {
      await rocks.write([
        deleteRange('webhookRequests', `${webhookId}\0`),
        deleteRange('webhookRequestsByStatus', `${webhookId}\0`),
      ])
    },
    close: async () => {},
  }
}
