// One stored event: payload, metadata, the runs it triggered (a skipped one says why), Send to Dev Server
// and Replay.
import { useState } from 'preact/hooks'
import { api, query } from '../api.ts'
import { Badge, Empty, ErrorMessage, Loading, Ok } from '../ui/common.tsx'
import { JsonView } from '../ui/json-view.tsx'
import { duration, ms, time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { type Column, DataTable } from '../ui/data-table.tsx'
import { SkipReason } from './run-flow.tsx'
import { schemaHref } from './schemas.tsx'

/** Where the event came from, linked: its webhook, the run that sent or invoked it, its cron function. */
function SourceLink({ source }: { source: any }) {
  if (source.kind === 'webhook') return <a href={`#/webhooks/${source.webhook_id}`}>webhook</a>
  if (source.kind === 'function')
    return (
      <>
        function {source.function_id}, <a href={`#/runs/${source.run_id}`}>run {source.run_id}</a> (step{' '}
        {source.step_id})
      </>
    )
  if (source.kind === 'invoke')
    return (
      <>
        invoked by function {source.function_id}, <a href={`#/runs/${source.run_id}`}>run {source.run_id}</a> (step{' '}
        {source.step_id}), to run{' '}
        <a href={`#/runs${query({ function: source.target })}`}>
          <code>{source.target}</code>
        </a>
      </>
    )
  if (source.kind === 'cron')
    return (
      <>
        cron <code>{source.cron}</code> of function{' '}
        <a href={`#/runs${query({ function: source.function_id })}`}>{source.function_id}</a>
      </>
    )
  if (source.kind === 'replay')
    return (
      <>
        replay of <a href={`#/events/${source.event_id}`}>{source.event_id}</a>
      </>
    )
  return <>{source.kind}</>
}

const DEV_SERVER = 'sluice.devServer'

/** Posts a copy of the event to another Sluice's Event API from the browser (CORS is open on /e/* in dev). */
function SendToDevServer({ event }: { event: any }) {
  const saved = JSON.parse(localStorage.getItem(DEV_SERVER) ?? '{}')
  const [result, setResult] = useState<{ ok?: string; error?: string }>({})
  const send = async (e: Event) => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const url = (form.elements.namedItem('url') as HTMLInputElement).value.trim().replace(/\/$/, '')
    const key = (form.elements.namedItem('key') as HTMLInputElement).value.trim() || 'dev'
    localStorage.setItem(DEV_SERVER, JSON.stringify({ url, key }))
    setResult({})
    try {
      const response = await fetch(`${url}/e/${encodeURIComponent(key)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: event.name, data: event.data, id: event.id, ts: event.ts }),
      })
      const body = await response.json()
      setResult(
        response.ok ? { ok: `Sent to ${url}: ${body.ids.join(', ')}` } : { error: `${body.code}: ${body.error}` },
      )
    } catch (err) {
      setResult({ error: `${url}: not reachable (${(err as Error).message}). Is a Dev Server running there?` })
    }
  }
  return (
    <form id="send-to-dev" class="inline-form" onSubmit={send} aria-label="Send to Dev Server">
      <label>
        Dev Server URL
        <input type="url" name="url" required value={saved.url ?? 'http://localhost:8288'} />
      </label>
      <label>
        Event key
        <input type="text" name="key" value={saved.key ?? 'dev'} autocomplete="off" />
      </label>
      <button type="submit">Send to Dev Server</button>
      <div id="send-to-dev-result">
        {result.ok && <Ok>{result.ok}</Ok>}
        <ErrorMessage error={result.error} />
      </div>
    </form>
  )
}

const EVENT_RUN_COLUMNS: Array<Column<any>> = [
  { header: 'Function', cell: (r) => <a href={`#/runs/${r.run_id}`}>{r.function_id}</a> },
  {
    header: 'Status',
    cell: (r) => (
      <>
        <Badge status={r.status} />
        {r.status === 'skipped' && <SkipReason error={r.error} />}
      </>
    ),
  },
  { header: 'Attempts', cell: (r) => r.attempts },
  {
    header: 'Duration',
    cell: (r) => duration((ms(r.ended_at) ?? Date.now()) - (ms(r.started_at) ?? ms(r.queued_at)!)),
  },
]

export function EventPage({ id }: { id: string }) {
  const event = useApi(() => api('GET', `/v1/events/${id}`), [id])
  const runs = useApi(() => api('GET', `/v1/events/${id}/runs`), [id])
  const [replay, setReplay] = useState<{ ok?: any; error?: Error }>({})
  if (event.loading && !event.data) return <Loading />
  if (event.error)
    return (
      <>
        <h1 tabIndex={-1}>Event</h1>
        <ErrorMessage error={event.error} />
        <p>
          <a href="#/events">Back to events</a>
        </p>
      </>
    )
  const e = event.data.data
  const doReplay = () =>
    api('POST', `/v1/events/${id}/replay`).then(
      (r) => setReplay({ ok: r.data }),
      (error) => setReplay({ error }),
    )
  return (
    <div id="event-detail">
      <p class="crumbs">
        <a href="#/events">Events</a> /
      </p>
      <h1 tabIndex={-1} class="break">
        {e.name}
      </h1>
      <dl class="meta">
        <dt>Internal ID</dt>
        <dd class="mono" id="event-internal-id">
          {e.internal_id}
        </dd>
        <dt>Dedup id</dt>
        <dd class="mono break">{e.id}</dd>
        <dt>Environment</dt>
        <dd>{e.env}</dd>
        <dt>Timestamp (ts)</dt>
        <dd>{time(e.ts)}</dd>
        <dt>Received</dt>
        <dd>{time(e.received_at)}</dd>
        <dt>Source</dt>
        <dd>
          <SourceLink source={e.source} />
        </dd>
        {e.schema_violations && (
          <>
            <dt>Schema violations</dt>
            <dd id="event-violations">
              <ul class="violations">
                {e.schema_violations.map((v: string) => (
                  <li key={v}>
                    <code class="break">{v}</code>
                  </li>
                ))}
              </ul>
              <a href={schemaHref(e.name, e.env)}>The schema of {e.name}</a>
            </dd>
          </>
        )}
        {e.duplicate_of && (
          <>
            <dt>Duplicate of</dt>
            <dd>
              <a id="duplicate-of" href={`#/events/${e.duplicate_of}`}>
                {e.duplicate_of}
              </a>{' '}
              (dropped by dedup; no function ran)
            </dd>
          </>
        )}
      </dl>
      <div class="actions">
        <button type="button" id="replay" onClick={doReplay} disabled={Boolean(e.duplicate_of)}>
          Replay to functions
        </button>
        {replay.ok && (
          <Ok>
            Replayed as <a href={`#/events/${replay.ok.internal_id}`}>{replay.ok.internal_id}</a>; its runs appear
            there.
          </Ok>
        )}
        <ErrorMessage error={replay.error} />
      </div>
      <SendToDevServer event={e} />
      <h2>Payload</h2>
      <JsonView value={e.data} label="Event data" />
      <h2>Runs</h2>
      {runs.loading && !runs.data ? (
        <Loading />
      ) : runs.error ? (
        <ErrorMessage error={runs.error} />
      ) : runs.data.data.length === 0 ? (
        <Empty>
          <p>
            No function is triggered by <code>{e.name}</code>
            {e.env ? ` in ${e.env}` : ''}. See <a href="#/functions">Functions</a>.
          </p>
        </Empty>
      ) : (
        <DataTable
          id="event-runs"
          caption="Runs this event triggered"
          rows={runs.data.data}
          rowKey={(r) => r.run_id}
          columns={EVENT_RUN_COLUMNS}
        />
      )}
    </div>
  )
}
