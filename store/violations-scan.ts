// Schema violations counted by reading the name's stored events (the embedded store: no column
// to aggregate on). Bounded: at most `maxEvents` events of the name in the range, newest first,
// and `timeBudgetMs`; past either the answer covers the newest part and says `truncated`.
import { bucketStarts, type SchemaViolations, type SchemaViolationsQuery } from './insights-types.ts'
import type { EventStore } from './types.ts'

export interface ViolationScanLimits {
  maxEvents: number
  timeBudgetMs: number
}

/** 100,000 events of one name: a second or so of reading on an idle machine. */
export const DEFAULT_VIOLATION_SCAN: ViolationScanLimits = { maxEvents: 100_000, timeBudgetMs: 2_000 }
const PAGE = 1_000

export async function scanSchemaViolations(
  events: Pick<EventStore, 'queryEvents'>,
  q: SchemaViolationsQuery,
  limits: ViolationScanLimits = DEFAULT_VIOLATION_SCAN,
): Promise<SchemaViolations> {
  const buckets = bucketStarts(q.from, q.to, q.bucketMs)
  const counts = new Array<number>(buckets.length).fill(0)
  const out: SchemaViolations = { buckets, counts, total: 0, samples: [], truncated: false }
  const deadline = performance.now() + limits.timeBudgetMs
  let read = 0
  let cursor: string | undefined
  do {
    const page = await events.queryEvents({
      name: q.name,
      env: q.env,
      receivedAfter: q.from - 1,
      receivedBefore: q.to,
      limit: Math.min(PAGE, limits.maxEvents - read),
      cursor,
    })
    for (const event of page.events) {
      if (event.schemaViolations === undefined || event.schemaViolations.length === 0) continue
      out.total++
      counts[Math.floor((event.receivedAt - buckets[0]) / q.bucketMs)]++
      if (out.samples.length < q.samples) {
        const { id, internalId, receivedAt, schemaViolations: violations } = event
        out.samples.push({ id, internalId, receivedAt, violations })
      }
    }
    read += page.events.length
    cursor = page.nextCursor ?? undefined
    if (cursor !== undefined && (read >= limits.maxEvents || performance.now() > deadline)) out.truncated = true
  } while (cursor !== undefined && !out.truncated)
  return out
}
