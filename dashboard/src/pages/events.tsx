// Events, newest first and live: new events arrive over GET /v1/events/stream while the page
// shows the newest ones (no end of range, not paused). Filters live in the URL, so a view can be shared.
import { useEffect, useState } from 'preact/hooks'
import { api, currentEnv, query, signingKey, streamEvents } from '../api.ts'
import { Empty, ErrorMessage, FilterSelect, Loading } from '../ui/common.tsx'
import { time } from '../ui/format.ts'
import { EventsChart, useEventCounts } from '../ui/events-chart.tsx'
import { type Column, DataTable } from '../ui/data-table.tsx'

const PAGE = 100
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/i
export const SOURCES = ['api', 'webhook', 'function'] as const

interface Filters {
  name: string
  source: string
  from: string
  to: string
  q: string
}

function filtersOf(params: URLSearchParams): Filters {
  return {
    name: params.get('name') ?? '',
    source: params.get('source') ?? '',
    from: params.get('from') ?? '',
    to: params.get('to') ?? '',
    q: params.get('q') ?? '',
  }
}

/** datetime-local values are local times; the API takes milliseconds. */
const toMs = (local: string) => (local ? new Date(local).getTime() : undefined)

async function loadEvents(f: Filters, env: string, cursor?: string): Promise<{ events: any[]; cursor: string | null }> {
  if (f.q) {
    const byDedupId = await api('GET', `/v1/events${query({ id: f.q, env, include_duplicates: 'true', limit: PAGE })}`)
    const byInternalId = ULID.test(f.q)
      ? await api('GET', `/v1/events/${f.q.toUpperCase()}`).then(
          (r) => [r.data],
          () => [],
        )
      : []
    const seen = new Set(byInternalId.map((e: any) => e.internal_id))
    return { events: [...byInternalId, ...byDedupId.data.filter((e: any) => !seen.has(e.internal_id))], cursor: null }
  }
  const page = await api(
    'GET',
    `/v1/events${query({ name: f.name, env, received_after: toMs(f.from), received_before: toMs(f.to), limit: PAGE, cursor })}`,
  )
  return { events: page.data, cursor: page.metadata.cursor }
}

const EVENT_COLUMNS: Array<Column<any>> = [
  {
    header: 'Name',
    class: 'name',
    cell: (e) => (
      <>
        <a href={`#/events/${e.internal_id}`}>{e.name}</a>
        {e.deduplicated && <span class="badge muted">duplicate</span>}
      </>
    ),
  },
  { header: 'Dedup id', class: 'mono clip', cell: (e) => e.id },
  { header: 'Env', cell: (e) => e.env },
  { header: 'Source', cell: (e) => e.source.kind },
  { header: 'Received', class: 'nowrap', cell: (e) => time(e.received_at) },
]

function FilterForm({ filters, names }: { filters: Filters; names: string[] }) {
  const submit = (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    const next = Object.fromEntries([...form.entries()].map(([k, v]) => [k, String(v).trim()]))
    location.hash = `#/events${query(next)}`
  }
  return (
    <form key={JSON.stringify(filters)} id="event-filters" class="filters" onSubmit={submit} aria-label="Filter events">
      <label>
        Name
        <input type="text" name="name" defaultValue={filters.name} list="event-names" placeholder="app/user.created" />
      </label>
      <datalist id="event-names">
        {names.map((n) => (
          <option key={n} value={n} />
        ))}
      </datalist>
      <FilterSelect label="Source" name="source" value={filters.source} options={SOURCES} />
      <label>
        Received from
        <input type="datetime-local" name="from" defaultValue={filters.from} />
      </label>
      <label>
        to
        <input type="datetime-local" name="to" defaultValue={filters.to} />
      </label>
      <label>
        Internal ID or dedup id
        <input type="search" name="q" defaultValue={filters.q} placeholder="01J… or evt_123" />
      </label>
      <div class="filter-actions">
        <button type="submit">Apply</button>
        <a class="button secondary" href="#/events">
          Clear
        </a>
      </div>
    </form>
  )
}

export function EventsPage({ params }: { params: URLSearchParams }) {
  const filters = filtersOf(params)
  const env = currentEnv.value
  const [events, setEvents] = useState<any[]>([])
  const [cursor, setCursor] = useState<string | null>(null)
  const [state, setState] = useState<{ loading: boolean; error?: Error }>({ loading: true })
  const [paused, setPaused] = useState(false)
  const [stream, setStream] = useState<'live' | 'reconnecting' | 'off'>('off')
  const [names, setNames] = useState<string[]>([])
  /** Events received live: each reloads the chart's counts (at most every few seconds). */
  const [arrived, setArrived] = useState(0)

  // Filters, environment and signing key: a change of any loads the list again.
  const key = `${params}\0${signingKey.value}`

  useEffect(() => {
    let current = true
    setState({ loading: true })
    loadEvents(filters, env).then(
      (page) => {
        if (current) {
          setEvents(page.events)
          setCursor(page.cursor)
          setState({ loading: false })
        }
      },
      (error: Error) => current && setState({ loading: false, error }),
    )
    api('GET', `/v1/functions${query({ env })}`).then(
      (r) =>
        current &&
        setNames(
          r.data.flatMap((f: any) =>
            f.triggers.flatMap((t: any) => (t.event && !t.event.includes('*') ? [t.event] : [])),
          ),
        ),
      () => {},
    )
    return () => {
      current = false
    }
  }, [key, env])

  // Live only while the list shows the newest events: no end of range, no search.
  const canBeLive = !filters.to && !filters.q
  useEffect(() => {
    if (!canBeLive || paused || state.loading || state.error) {
      setStream('off')
      return
    }
    // Events stored since the newest one shown (while loading or paused) come first.
    const since = events.reduce((newest, e) => Math.max(newest, e.received_at), 0) || undefined
    return streamEvents(`/v1/events/stream${query({ env, name: filters.name, since })}`, {
      onEvent: (event) => {
        setEvents((list) => (list.some((e) => e.internal_id === event.internal_id) ? list : [event, ...list]))
        setArrived((n) => n + 1)
      },
      onState: setStream,
    })
  }, [key, env, paused, canBeLive, state.loading, state.error])

  // Counted by the server once the list is on screen: the rows come first.
  const range = { from: toMs(filters.from), to: toMs(filters.to), env, name: filters.name }
  const counts = useEventCounts(range, arrived, state.loading)
  const more = async () => {
    const page = await loadEvents(filters, env, cursor ?? undefined).catch((error: Error) => {
      setState({ loading: false, error })
      return null
    })
    if (page) {
      setEvents((list) => [...list, ...page.events])
      setCursor(page.cursor)
    }
  }
  // Source is filtered here: the store indexes name, env and time, not the source kind.
  const shown = filters.source ? events.filter((e) => e.source.kind === filters.source) : events
  const knownNames = [...new Set([...names, ...events.map((e) => e.name)])].sort()

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Events</h1>
        {canBeLive && (
          <div class="live">
            <span class={`dot ${paused ? 'paused' : stream}`} aria-hidden="true" />
            <span id="live-status" role="status">
              {paused
                ? 'Paused'
                : stream === 'live'
                  ? 'Live'
                  : stream === 'reconnecting'
                    ? 'Reconnecting…'
                    : 'Connecting…'}
            </span>
            <button type="button" id="pause" aria-pressed={paused} onClick={() => setPaused(!paused)}>
              {paused ? 'Resume' : 'Pause'}
            </button>
          </div>
        )}
      </div>
      <FilterForm filters={filters} names={knownNames} />
      {!filters.q && <EventsChart counts={counts.data} error={counts.error} />}
      <ErrorMessage error={state.error} />
      {state.loading ? (
        <Loading />
      ) : shown.length === 0 ? (
        <Empty>
          {filters.name || filters.q || filters.from || filters.to || filters.source ? (
            <p>
              No events match these filters. <a href="#/events">Clear the filters</a>.
            </p>
          ) : (
            <p>
              No events yet. Send one with{' '}
              <code>curl -X POST {location.origin}/e/dev -d '&#123;"name":"app/hello","data":&#123;&#125;&#125;'</code>,
              from <a href="#/send">Send event</a>, or point a <a href="#/webhooks">webhook</a> at Sluice. They appear
              here as they arrive.
            </p>
          )}
        </Empty>
      ) : (
        <DataTable
          id="events"
          caption="Events, newest first"
          cards
          rows={shown}
          rowKey={(e) => e.internal_id}
          rowId={(e) => e.internal_id}
          rowHref={(e) => `#/events/${e.internal_id}`}
          columns={EVENT_COLUMNS}
        />
      )}
      {cursor && !state.loading && (
        <button type="button" id="load-more" class="secondary" onClick={more}>
          Load older events
        </button>
      )}
    </>
  )
}
