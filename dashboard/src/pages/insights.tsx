// Insights: aggregates over the newest records the REST API returns (events per minute by name,
// run outcomes by function, failed webhook requests by error code). Counted in the browser over
// at most SAMPLE records of each kind, and said so on the page.
import { api, currentEnv, query } from '../api.ts'
import { Empty, ErrorMessage, Loading } from '../ui/common.tsx'
import { EventsChart } from '../ui/events-chart.tsx'
import { useApi } from '../ui/use-api.ts'

const SAMPLE = 2_000
const PAGE = 1_000

async function newest(path: string, params: Record<string, string>): Promise<any[]> {
  const rows: any[] = []
  let cursor: string | undefined
  do {
    const page = await api('GET', `${path}${query({ ...params, limit: PAGE, cursor })}`)
    rows.push(...page.data)
    cursor = page.metadata.cursor ?? undefined
  } while (cursor && rows.length < SAMPLE)
  return rows.slice(0, SAMPLE)
}

function countBy<T>(rows: T[], keys: (row: T) => [string, string]): Array<[string, Record<string, number>]> {
  const table = new Map<string, Record<string, number>>()
  for (const row of rows) {
    const [group, column] = keys(row)
    const counts = table.get(group) ?? {}
    counts[column] = (counts[column] ?? 0) + 1
    table.set(group, counts)
  }
  return [...table.entries()].sort((a, b) => a[0].localeCompare(b[0]))
}

async function load(env: string) {
  const [events, runs, webhooks] = await Promise.all([
    newest('/v1/events', { env }),
    newest('/v1/runs', { env }),
    api('GET', '/v1/webhooks').then((r) => r.data as any[]),
  ])
  const failures = (
    await Promise.all(
      webhooks.map((w) =>
        api('GET', `/v1/webhooks/${w.id}/requests?status=failed&limit=${PAGE}`).then((r) =>
          r.data.map((q: any) => ({ webhook: w.name, code: q.error?.code ?? 'UNKNOWN' })),
        ),
      ),
    )
  ).flat()
  return { events, runs, failures }
}

function CountTable({
  id,
  caption,
  rows,
  columns,
}: {
  id: string
  caption: string
  rows: Array<[string, Record<string, number>]>
  columns: string[]
}) {
  return (
    // Focusable: on a phone the table scrolls sideways, and keyboard users must be able to scroll it
    // (axe's scrollable-region-focusable); a labelled region says what the focus lands on.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: see above
    // biome-ignore lint/a11y/useSemanticElements: a <section> would add a landmark per table
    <div class="table-wrap" tabIndex={0} role="region" aria-label={`${caption} counts`}>
      <table id={id} class="list">
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{caption}</th>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map(([group, counts]) => (
            <tr key={group}>
              <td class="name">{group}</td>
              {columns.map((c) => (
                <td key={c}>{counts[c] ?? 0}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

export function InsightsPage() {
  const env = currentEnv.value
  const data = useApi(() => load(env), [env])
  if (data.loading && !data.data)
    return (
      <>
        <h1 tabIndex={-1}>Insights</h1>
        <Loading />
      </>
    )
  if (!data.data)
    return (
      <>
        <h1 tabIndex={-1}>Insights</h1>
        <ErrorMessage error={data.error} />
      </>
    )
  const { events, runs, failures } = data.data
  const outcomes = ['completed', 'failed', 'running', 'queued', 'cancelled']
  const codes = [...new Set(failures.map((f) => f.code))].sort()
  return (
    <>
      <h1 tabIndex={-1}>Insights</h1>
      <p class="muted">
        Counted over the newest {SAMPLE.toLocaleString()} events and runs{env ? ` of ${env}` : ''}. For SQL over every
        stored event, query ClickHouse (docs/clickhouse.md).
      </p>
      <h2>Events per minute by name</h2>
      {events.length ? (
        <EventsChart events={events} />
      ) : (
        <Empty>
          <p>No events yet.</p>
        </Empty>
      )}
      <h2>Run outcomes by function</h2>
      {runs.length ? (
        <CountTable
          id="run-outcomes"
          caption="Function"
          rows={countBy(runs, (r) => [r.function_id, r.status])}
          columns={outcomes}
        />
      ) : (
        <Empty>
          <p>
            No runs yet. See <a href="#/functions">Functions</a>.
          </p>
        </Empty>
      )}
      <h2>Failed webhook requests by error code</h2>
      {failures.length ? (
        <CountTable
          id="webhook-failures"
          caption="Webhook"
          rows={countBy(failures, (f) => [f.webhook, f.code])}
          columns={codes}
        />
      ) : (
        <Empty>
          <p>No failed webhook requests.</p>
        </Empty>
      )}
    </>
  )
}
