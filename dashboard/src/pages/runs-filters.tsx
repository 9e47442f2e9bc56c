// The runs page's filters: status, function, event name and a queue-time range. They live in the URL, so
// a view can be shared, and the same filters choose the runs a bulk cancel or replay acts on.
import { query } from '../api.ts'
import { FilterSelect } from '../ui/common.tsx'
import { time } from '../ui/format.ts'

export const STATUSES = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'skipped']
/** Statuses of runs that have not ended: the ones a cancel acts on. */
export const UNFINISHED = ['queued', 'running', 'waiting']

export interface RunFilters {
  status: string
  fn: string
  eventName: string
  /** datetime-local values: local times. */
  from: string
  to: string
}

export function filtersOf(params: URLSearchParams): RunFilters {
  return {
    status: params.get('status') ?? '',
    fn: params.get('function') ?? '',
    eventName: params.get('event_name') ?? '',
    from: params.get('from') ?? '',
    to: params.get('to') ?? '',
  }
}

const iso = (local: string) => (local ? new Date(local).toISOString() : '')

/** The filters as the API names them (GET /v1/runs, POST /v1/runs/bulk), the empty ones left out. */
export function apiFilter(f: RunFilters, env: string): Record<string, string> {
  const all = {
    function: f.fn,
    env,
    status: f.status,
    event_name: f.eventName,
    queued_after: iso(f.from),
    queued_before: iso(f.to),
  }
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== ''))
}

/** "function flow-plain, status waiting, in production": the runs a bulk action acts on. */
export function describeFilter(filter: Record<string, string | undefined>): string {
  const parts = [
    filter.function && `function ${filter.function}`,
    filter.status && `status ${filter.status}`,
    filter.event_name && `event ${filter.event_name}`,
    filter.queued_after && `queued after ${time(filter.queued_after)}`,
    filter.queued_before && `queued before ${time(filter.queued_before)}`,
  ].filter(Boolean)
  const where = filter.env ? `, in ${filter.env}` : ', in every environment'
  return `${parts.length === 0 ? 'every run' : parts.join(', ')}${where}`
}

export function RunFilterForm({ filters, functionIds }: { filters: RunFilters; functionIds: string[] }) {
  const submit = (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    const next = Object.fromEntries([...form.entries()].map(([k, v]) => [k, String(v).trim()]))
    location.hash = `#/runs${query(next)}`
  }
  return (
    <form key={JSON.stringify(filters)} id="run-filters" class="filters" onSubmit={submit} aria-label="Filter runs">
      <FilterSelect label="Status" name="status" value={filters.status} options={STATUSES} />
      <FilterSelect label="Function" name="function" value={filters.fn} options={functionIds} />
      <label>
        Event name
        <input type="text" name="event_name" defaultValue={filters.eventName} placeholder="shop/order.placed" />
      </label>
      <label>
        Queued from
        <input type="datetime-local" name="from" defaultValue={filters.from} />
      </label>
      <label>
        to
        <input type="datetime-local" name="to" defaultValue={filters.to} />
      </label>
      <div class="filter-actions">
        <button type="submit">Apply</button>
        <a class="button secondary" href="#/runs">
          Clear
        </a>
      </div>
    </form>
  )
}
