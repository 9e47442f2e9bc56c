// Alert incidents, open and recent (GET /v1/alerts/incidents): each links to the failing requests or
// runs, with one button that replays them all (a webhook's failed requests, or a bulk replay of a
// function's failed runs), and shows whether its notification reached the endpoint.
import { useState } from 'preact/hooks'
import { api, query } from '../api.ts'
import { Badge, Empty, ErrorMessage, Loading, Ok } from '../ui/common.tsx'
import { type Column, DataTable } from '../ui/data-table.tsx'
import { fromNow, time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'

/** An incident as GET /v1/alerts/incidents gives it (api/alert-schemas.ts). */
interface Incident {
  id: string
  rule_name: string
  target: { kind: 'webhook' | 'function'; id: string }
  metric: string
  threshold: number
  status: string
  opened_at: string
  resolved_at: string | null
  value: number
  notification: { event: string; status: string; attempts: number; error: string | null }
}

const keyOf = (target: { id: string }) => target.id.slice(target.id.indexOf('/') + 1)
const envOf = (target: { id: string }) => target.id.slice(0, target.id.indexOf('/'))

/** The dashboard page of what failed: the webhook's page (its deliveries), or the runs page filtered. */
function failingHref(i: Incident): string {
  if (i.target.kind === 'webhook') return `#/webhooks/${i.target.id}`
  return `#/runs${query({ function: keyOf(i.target), status: 'failed' })}`
}

function ReplayButton({ incident }: { incident: Incident }) {
  const [done, setDone] = useState<string>()
  const [error, setError] = useState<Error>()
  if (incident.metric === 'held_requests') return <span class="muted">resume the webhook</span>
  const replay = () => {
    setError(undefined)
    const target = incident.target
    const call =
      target.kind === 'webhook'
        ? api('POST', `/v1/webhooks/${target.id}/requests/replay`, { status: 'failed' }).then(
            (r) => `${r.data.replayed} replayed`,
          )
        : api('POST', '/v1/runs/bulk', {
            action: 'replay',
            mode: 'retry',
            filter: { function: keyOf(target), env: envOf(target), status: 'failed' },
          }).then(() => 'bulk replay started')
    call.then(setDone, setError)
  }
  return (
    <>
      <button type="button" class="small replay-failing" onClick={replay}>
        Replay failed<span class="sr-only"> {incident.rule_name}</span>
      </button>
      {done && <Ok>{done}</Ok>}
      <ErrorMessage error={error} />
    </>
  )
}

const COLUMNS: Array<Column<Incident>> = [
  { header: 'Rule', class: 'name', cell: (i) => i.rule_name },
  { header: 'Status', cell: (i) => <Badge status={i.status} /> },
  {
    header: 'Failing',
    cell: (i) => (
      <a class="failing" href={failingHref(i)}>
        {i.target.kind} {i.target.kind === 'function' ? i.target.id : 'requests'}
      </a>
    ),
  },
  { header: 'Value', class: 'nowrap', cell: (i) => `${i.metric} ${i.value} > ${i.threshold}` },
  {
    header: 'Opened',
    class: 'nowrap',
    cell: (i) => <span title={time(i.opened_at)}>{fromNow(i.opened_at)}</span>,
  },
  {
    header: 'Resolved',
    class: 'nowrap',
    cell: (i) => (i.resolved_at ? <span title={time(i.resolved_at)}>{fromNow(i.resolved_at)}</span> : ''),
  },
  {
    header: 'Notification',
    cell: (i) => (
      <span class={`notification ${i.notification.status}`} title={i.notification.error ?? undefined}>
        {i.notification.event} {i.notification.status}
        {i.notification.attempts > 1 && ` after ${i.notification.attempts} attempts`}
        {i.notification.error && `: ${i.notification.error}`}
      </span>
    ),
  },
  { header: 'Actions', hideHeader: true, cell: (i) => <ReplayButton incident={i} /> },
]

export function IncidentsPage() {
  const incidents = useApi(() => api('GET', '/v1/alerts/incidents'), [])
  return (
    <>
      <h1 tabIndex={-1}>Incidents</h1>
      <p class="muted">
        Alert rules fire and resolve here (rules: <code>sluice alerts</code> or <code>POST /v1/alerts</code>).
      </p>
      <ErrorMessage error={incidents.error} />
      {incidents.loading && !incidents.data ? (
        <Loading />
      ) : incidents.data?.data.length === 0 ? (
        <Empty>
          <p>No incidents: no alert rule has fired.</p>
        </Empty>
      ) : (
        incidents.data && (
          <DataTable
            id="incidents"
            caption="Incidents"
            rows={incidents.data.data as Incident[]}
            rowKey={(i) => i.id}
            rowId={(i) => i.id}
            columns={COLUMNS}
          />
        )
      )}
    </>
  )
}
