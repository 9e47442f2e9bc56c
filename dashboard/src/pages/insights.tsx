// Insights: counts the server computes over a time range (GET /v1/insights/events,
// /webhook-failures, /run-outcomes: the store's indexes in embedded mode, ClickHouse in
// distributed mode), and in distributed mode a read-only SQL console over ClickHouse.
import { api, currentEnv, query } from '../api.ts'
import { Empty, ErrorMessage, Loading } from '../ui/common.tsx'
import { DataTable } from '../ui/data-table.tsx'
import { EventsChart, useEventCounts } from '../ui/events-chart.tsx'
import { useApi } from '../ui/use-api.ts'
import { type SqlInfo, SqlConsole } from './insights-sql.tsx'

const HOUR = 3_600_000
export const RANGES = [
  ['1h', 'Last hour', HOUR],
  ['6h', 'Last 6 hours', 6 * HOUR],
  ['24h', 'Last 24 hours', 24 * HOUR],
  ['7d', 'Last 7 days', 7 * 24 * HOUR],
] as const
const OUTCOMES = ['completed', 'failed', 'running', 'waiting', 'queued', 'cancelled']

type Pivot = Array<[group: string, counts: Record<string, number>]>

function pivot<Row>(rows: Row[], keys: (row: Row) => [group: string, column: string, count: number]): Pivot {
  const table = new Map<string, Record<string, number>>()
  for (const row of rows) {
    const [group, column, count] = keys(row)
    const counts = table.get(group) ?? {}
    counts[column] = (counts[column] ?? 0) + count
    table.set(group, counts)
  }
  return [...table.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))
}

function CountTable({
  id,
  caption,
  first,
  rows,
  columns,
}: {
  id: string
  caption: string
  first: string
  rows: Pivot
  columns: string[]
}) {
  return (
    <DataTable<Pivot[number]>
      id={id}
      caption={caption}
      rows={rows}
      rowKey={([group]) => group}
      columns={[
        { header: first, class: 'name group', cell: ([group]) => group },
        ...columns.map((c) => ({ header: c, class: 'num', cell: ([, counts]: Pivot[number]) => counts[c] ?? 0 })),
      ]}
    />
  )
}

interface Range {
  from: number
  to: number
  env: string
}

function Partial({ truncated }: { truncated?: boolean }) {
  return truncated ? (
    <p class="muted small-text">
      Partly counted: the range holds more than one count reads; pick a shorter one or one environment.
    </p>
  ) : null
}

function RunOutcomes({ range }: { range: Range }) {
  const runs = useApi(
    () => api('GET', `/v1/insights/run-outcomes${query({ ...range })}`),
    [range.from, range.to, range.env],
  )
  if (runs.error) return <ErrorMessage error={runs.error} />
  if (!runs.data) return <Loading />
  const rows = pivot(runs.data.data.rows as any[], (r) => [r.function_id, r.status, r.count])
  return rows.length ? (
    <>
      <CountTable
        id="run-outcomes"
        caption="Run outcomes by function"
        first="Function"
        rows={rows}
        columns={OUTCOMES}
      />
      <Partial truncated={runs.data.data.truncated} />
    </>
  ) : (
    <Empty>
      <p>
        No runs in this range. A run starts when an event triggers a <a href="#/functions">function</a>.
      </p>
    </Empty>
  )
}

function WebhookFailures({ range }: { range: Range }) {
  const failures = useApi(
    () => api('GET', `/v1/insights/webhook-failures${query({ ...range })}`),
    [range.from, range.to, range.env],
  )
  if (failures.error) return <ErrorMessage error={failures.error} />
  if (!failures.data) return <Loading />
  const list = failures.data.data.rows as any[]
  const codes = [...new Set(list.map((f) => f.code))].sort()
  return list.length ? (
    <>
      <CountTable
        id="webhook-failures"
        caption="Failed webhook requests by error code"
        first="Webhook"
        rows={pivot(list, (f) => [f.webhook_name, f.code, f.count])}
        columns={codes}
      />
      <Partial truncated={failures.data.data.truncated} />
    </>
  ) : (
    <Empty>
      <p>
        No failed webhook requests in this range. A failed one (a transform that threw, a bad signature) is kept and can
        be replayed from its <a href="#/webhooks">webhook</a>.
      </p>
    </Empty>
  )
}

export function InsightsPage({ params }: { params: URLSearchParams }) {
  const env = currentEnv.value
  const chosen = RANGES.find(([key]) => key === params.get('range')) ?? RANGES[0]
  const info = useApi(() => api<{ data: { sql: SqlInfo | null } }>('GET', '/v1/insights'), [])
  // The range ends now, to the minute, so the three counts agree on it.
  const to = Math.ceil(Date.now() / 60_000) * 60_000
  const range: Range = { from: to - chosen[2], to, env }
  const events = useEventCounts(range)
  return (
    <>
      <h1 tabIndex={-1}>Insights</h1>
      <ErrorMessage error={info.error} />
      {info.data?.data.sql && <SqlConsole info={info.data.data.sql} />}
      <div class="page-head">
        <h2>Counts</h2>
        <label class="inline">
          Range
          <select
            id="insights-range"
            value={chosen[0]}
            onChange={(e) => {
              location.hash = `#/insights${query({ range: e.currentTarget.value })}`
            }}
          >
            {RANGES.map(([key, label]) => (
              <option key={key} value={key}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <p class="muted">
        Counted by the server, {env ? `in ${env}` : 'in every environment'}, by receive time (runs by queue time).
        {info.data && !info.data.data.sql && (
          <> SQL over every stored event needs the distributed mode (ClickHouse): see docs/clickhouse.md.</>
        )}
      </p>
      <h3>Events by name</h3>
      {events.data || events.error ? <EventsChart counts={events.data} error={events.error} /> : <Loading />}
      <h3>Run outcomes by function</h3>
      <RunOutcomes range={range} />
      <h3>Failed webhook requests by error code</h3>
      <WebhookFailures range={range} />
    </>
  )
}
