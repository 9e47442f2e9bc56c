// Which runs a bulk action touches, and the runs list shows: the store's own filters (function, env,
// status) page through the runs, and the event name and queue time are checked on each.
import type { RunDoc, RunPage, RunQuery, RunStore } from '../store/runs-types.ts'
import type { RunStatus } from '../core/run-doc.ts'
import type { RunFilter } from '../control/types.ts'

export const PAGE = 500

export function matches(run: RunDoc, filter: RunFilter): boolean {
  return (
    (filter.eventName === undefined || run.eventName === filter.eventName) &&
    (filter.queuedAfter === undefined || run.queuedAt > filter.queuedAfter) &&
    (filter.queuedBefore === undefined || run.queuedAt < filter.queuedBefore)
  )
}

/** One page of runs after `cursor`, and the runs of it that match. */
export async function page(runs: RunStore, filter: RunFilter, cursor: string | null, limit = PAGE) {
  const query: RunQuery = {
    functionId: filter.function,
    env: filter.env,
    status: filter.status as RunStatus | undefined,
    limit,
    ...(cursor !== null && { cursor }),
  }
  const result = await runs.queryRuns(query)
  return {
    scanned: result.runs.length,
    matched: result.runs.filter((r) => matches(r, filter)),
    next: result.nextCursor,
  }
}

/** Runs the list reads at most for one page of a filter the store cannot apply: past it, a shorter page. */
const SCAN_LIMIT = 10_000

/**
 * Up to `query.limit` runs of `query` that also match `filter`, below `query.cursor`. The cursor goes on
 * from the last run read, so a page cut short by the scan bound continues where it stopped.
 */
export async function findRuns(runs: RunStore, query: RunQuery, filter: RunFilter): Promise<RunPage> {
  const found: RunDoc[] = []
  let cursor = query.cursor ?? null
  for (let scanned = 0; found.length < query.limit && scanned < SCAN_LIMIT; ) {
    const result = await runs.queryRuns({ ...query, limit: PAGE, ...(cursor !== null && { cursor }) })
    for (const run of result.runs) {
      scanned++
      cursor = run.runId
      if (!matches(run, filter)) continue
      found.push(run)
      if (found.length === query.limit) break
    }
    if (found.length < query.limit && result.nextCursor === null) return { runs: found, nextCursor: null }
  }
  return { runs: found, nextCursor: cursor }
}
