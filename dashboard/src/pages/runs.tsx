// Function runs, newest first, filterable by status, function, event name and queue time; a waiting run
// says what it waits for, a skipped one why. The bulk panel cancels or replays what the filters match.
import { useEffect, useState } from 'preact/hooks'
import { api, currentEnv, query } from '../api.ts'
import { Badge, Empty, ErrorMessage, Loading } from '../ui/common.tsx'
import { duration, ms, time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { type Column, DataTable } from '../ui/data-table.tsx'
import { PauseSummary } from './run-pause.tsx'
import { SkipReason } from './run-flow.tsx'
import { apiFilter, filtersOf, RunFilterForm } from './runs-filters.tsx'
import { BulkPanel } from './runs-bulk.tsx'

const PAGE = 50

export const runDuration = (r: any) => {
  const start = ms(r.started_at) ?? ms(r.queued_at)
  return start === undefined ? undefined : (ms(r.ended_at) ?? Date.now()) - start
}

const RUN_COLUMNS: Array<Column<any>> = [
  {
    header: 'Status',
    cell: (r) => (
      <>
        <Badge status={r.status} />
        {r.status === 'waiting' && r.waiting_for && (
          <div class="muted small-text waiting-for">
            <PauseSummary pause={r.waiting_for} />
          </div>
        )}
        {r.status === 'skipped' && <SkipReason error={r.error} />}
      </>
    ),
  },
  { header: 'Function', class: 'name', cell: (r) => <a href={`#/runs/${r.run_id}`}>{r.function_id}</a> },
  { header: 'Event', class: 'name', cell: (r) => <a href={`#/events/${r.event_id}`}>{r.event_name}</a> },
  { header: 'Duration', class: 'nowrap', cell: (r) => duration(runDuration(r)) },
  { header: 'Attempts', cell: (r) => r.attempts },
  { header: 'Queued', class: 'nowrap', cell: (r) => time(r.queued_at) },
]

export function RunsPage({ params }: { params: URLSearchParams }) {
  const env = currentEnv.value
  const filters = filtersOf(params)
  const filter = apiFilter(filters, env)
  const key = JSON.stringify(filter)
  const functions = useApi(() => api('GET', `/v1/functions${query({ env })}`), [env])
  const first = useApi(() => api('GET', `/v1/runs${query({ ...filter, limit: PAGE })}`), [key])
  const [older, setOlder] = useState<{ runs: any[]; cursor: string | null }>({ runs: [], cursor: null })
  useEffect(() => setOlder({ runs: [], cursor: first.data?.metadata.cursor ?? null }), [first.data])
  const more = async () => {
    const page = await api('GET', `/v1/runs${query({ ...filter, limit: PAGE, cursor: older.cursor })}`)
    setOlder((o) => ({ runs: [...o.runs, ...page.data], cursor: page.metadata.cursor }))
  }
  const runs = [...(first.data?.data ?? []), ...older.runs]
  const functionIds = [
    ...new Set((functions.data?.data ?? []).map((f: any) => `${f.app_id}-${f.function_id}`)),
  ] as string[]
  if (filters.fn && !functionIds.includes(filters.fn)) functionIds.push(filters.fn)
  const filtered = Object.keys(filter).some((k) => k !== 'env')
  return (
    <>
      <h1 tabIndex={-1}>Runs</h1>
      <RunFilterForm filters={filters} functionIds={functionIds} />
      <BulkPanel key={key} filter={filter} onProgress={first.reload} />
      <ErrorMessage error={first.error} />
      {first.loading && !first.data ? (
        <Loading />
      ) : runs.length === 0 ? (
        <Empty>
          <p>
            No runs{filtered ? ' match these filters' : ' yet'}
            {older.cursor ? ' among the newest ones; load older runs to look further' : ''}. A run starts when an event
            arrives whose name triggers a <a href="#/functions">function</a>.
          </p>
        </Empty>
      ) : (
        <DataTable
          id="runs"
          caption="Runs, newest first"
          cards
          rows={runs}
          rowKey={(r) => r.run_id}
          rowId={(r) => r.run_id}
          rowHref={(r) => `#/runs/${r.run_id}`}
          columns={RUN_COLUMNS}
        />
      )}
      {older.cursor && (
        <button type="button" class="secondary" onClick={more}>
          Load older runs
        </button>
      )}
    </>
  )
}
