// The embedded audit log: one key per entry, `A<ULID>`, read newest first by a reverse scan. A page
// reads at most SCAN_LIMIT entries, so a sparse filter answers a short page with a cursor to go on.
import { keyPrefix, keyRange } from '../core/keyspaces.ts'
import type { Rocks } from '../core/rocks.ts'
import { auditMatches, type AuditRecord, type AuditStore } from './audit-types.ts'

const SCAN_LIMIT = 5_000

export function createRocksAuditStore(rocks: Rocks): AuditStore {
  return {
    async append(records) {
      await rocks.write(records.map((r) => ({ type: 'put', key: keyPrefix('audit', r.id), value: JSON.stringify(r) })))
    },
    async page(q) {
      const { gte, lt } = keyRange('audit')
      const records: AuditRecord[] = []
      let scanned = 0
      let last: string | undefined
      const upper = q.before !== undefined ? keyPrefix('audit', q.before) : lt
      for await (const { value } of rocks.scan({ gte, lt: upper, reverse: true, batch: 256 })) {
        const record = JSON.parse(value.toString()) as AuditRecord
        last = record.id
        if (q.since !== undefined && record.at < q.since) return { records, nextCursor: null }
        if (auditMatches(record, q)) records.push(record)
        if (records.length >= q.limit || ++scanned >= SCAN_LIMIT) return { records, nextCursor: last }
      }
      return { records, nextCursor: null }
    },
  }
}
