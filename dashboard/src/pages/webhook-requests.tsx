// A webhook's recent deliveries (what became of each request, replayable), and for the branch
// group the central page: requests that named no active branch environment, kept without running
// functions and replayable once the environment exists.
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { Badge, Empty, ErrorMessage, Loading, Ok } from '../ui/common.tsx'
import { time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { DataTable } from '../ui/data-table.tsx'

/** accepted (events published), filtered (none: all denied by name lists), failed, unrouted. */
function outcome(r: any): string {
  if (r.status === 'delivered') return r.event_ids.length === 0 ? 'filtered' : 'accepted'
  return r.status
}

function deliveryDetail(r: any) {
  return (
    <>
      {r.error ? (
        <span class="error">
          {r.error.code}: {r.error.message}
        </span>
      ) : (
        r.event_ids.map((eventId: string) => (
          <a key={eventId} class="event-link" href={`#/events/${eventId}`}>
            {eventId}
          </a>
        ))
      )}
      {r.status === 'unrouted' && (r.events ?? []).map((e: any) => e.name).join(', ')}
    </>
  )
}

export function Deliveries({ webhookId }: { webhookId: string }) {
  const requests = useApi(() => api('GET', `/v1/webhooks/${webhookId}/requests?limit=50`), [webhookId])
  const [notice, setNotice] = useState<{ ok?: string; error?: Error }>({})
  const replay = (path: string, body?: unknown) =>
    api('POST', path, body).then(
      (r) => {
        setNotice({ ok: r.data.replayed !== undefined ? `Replayed ${r.data.replayed} failed requests.` : 'Replayed.' })
        setTimeout(requests.reload, 500)
      },
      (error) => setNotice({ error }),
    )
  const list = requests.data?.data ?? []
  const failed = list.filter((r: any) => r.status === 'failed').length
  return (
    <section aria-labelledby="deliveries-title">
      <div class="page-head">
        <h2 id="deliveries-title">Recent deliveries</h2>
        <button type="button" class="secondary" onClick={requests.reload}>
          Refresh
        </button>
        {failed > 0 && (
          <button
            type="button"
            id="replay-all"
            onClick={() => replay(`/v1/webhooks/${webhookId}/requests/replay`, { status: 'failed' })}
          >
            Replay all failed
          </button>
        )}
      </div>
      {notice.ok && <Ok>{notice.ok}</Ok>}
      <ErrorMessage error={notice.error ?? requests.error} />
      {requests.loading && !requests.data ? (
        <Loading />
      ) : list.length === 0 ? (
        <Empty>
          <p>
            No requests yet. POST anything to the URL above, e.g.{' '}
            <code class="break">
              curl -X POST -H 'content-type: application/json' -d '&#123;"type":"ping"&#125;' URL
            </code>
          </p>
        </Empty>
      ) : (
        <DataTable<any>
          id="deliveries"
          caption="Recent deliveries, newest first"
          rows={list}
          rowKey={(r) => `${r.request_id}/${r.attempt}`}
          rowId={(r) => r.request_id}
          columns={[
            { header: 'Received', class: 'nowrap', cell: (r) => time(r.received_at) },
            { header: 'Outcome', cell: (r) => <Badge status={outcome(r)} /> },
            { header: 'Events or error', class: 'break', cell: deliveryDetail },
            {
              header: 'Actions',
              hideHeader: true,
              cell: (r) => (
                <button
                  type="button"
                  class="small"
                  onClick={() => replay(`/v1/webhooks/${webhookId}/requests/${r.request_id}/replay`)}
                >
                  Replay
                </button>
              ),
            },
          ]}
        />
      )}
    </section>
  )
}

function envNamed(r: any): string {
  const header = Object.entries(r.request.headers as Record<string, string>).find(
    ([k]) => k.toLowerCase() === 'x-service-env',
  )?.[1]
  return header ?? r.request.query['x-service-env']?.[0] ?? '(no environment)'
}

export function Unrouted({ webhookId }: { webhookId: string }) {
  const requests = useApi(() => api('GET', `/v1/webhooks/${webhookId}/requests?status=unrouted&limit=50`), [webhookId])
  const [error, setError] = useState<Error>()
  const replayAll = () =>
    api('POST', `/v1/webhooks/${webhookId}/requests/replay`, { status: 'unrouted' }).then(
      () => requests.reload(),
      setError,
    )
  const list = requests.data?.data ?? []
  return (
    <section aria-labelledby="unrouted-title">
      <h2 id="unrouted-title">Unrouted requests ({list.length})</h2>
      <p class="muted">
        Sent without x-service-env, or naming no active branch environment: stored here, no function ran.
      </p>
      <ErrorMessage error={error ?? requests.error} />
      {list.length > 0 ? (
        <button type="button" id="replay-unrouted" onClick={replayAll}>
          Replay all unrouted
        </button>
      ) : (
        <p class="muted">None.</p>
      )}
      {list.length > 0 && (
        <DataTable<any>
          id="unrouted"
          caption="Unrouted requests"
          rows={list}
          rowKey={(r) => r.request_id}
          columns={[
            { header: 'Received', class: 'nowrap', cell: (r) => time(r.received_at) },
            { header: 'Environment named', cell: envNamed },
            { header: 'Events', class: 'break', cell: (r) => (r.events ?? []).map((e: any) => e.name).join(', ') },
          ]}
        />
      )}
    </section>
  )
}
