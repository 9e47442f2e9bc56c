// Which runs a bulk action touches: the store's own filters (function, env, status) page through the
// runs, and the event name and queue time are checked on each.
import type { RunDoc, RunQuery, RunStore } from '../store/runs-types.ts'
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
