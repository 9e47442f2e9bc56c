// Event schemas: the names with a schema in the header's environment (every one when "All"), and a
// way to start one for a name that has none yet.
import { api, currentEnv, query } from '../api.ts'
import { Empty, ErrorMessage, Loading } from '../ui/common.tsx'
import { type Column, DataTable } from '../ui/data-table.tsx'
import { fromNow, time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'

interface ListedSchema {
  name: string
  env: string
  version: number
  created_at: string
  /** Only if the server counts it cheaply (the shared REST contract, item 3). */
  violations_24h?: number
}

/** The page of one name's schema in one environment (names hold `/`: one encoded segment). */
export const schemaHref = (name: string, env: string) => `#/schemas/${encodeURIComponent(name)}${query({ env })}`

const COLUMNS: Array<Column<ListedSchema>> = [
  { header: 'Event name', class: 'name', cell: (s) => <a href={schemaHref(s.name, s.env)}>{s.name}</a> },
  { header: 'Env', cell: (s) => s.env },
  { header: 'Version', class: 'num', cell: (s) => s.version },
  {
    header: 'Pushed',
    class: 'nowrap',
    cell: (s) => <span title={time(s.created_at)}>{fromNow(s.created_at)}</span>,
  },
]
const VIOLATIONS_COLUMN: Column<ListedSchema> = {
  header: 'Violations (24 h)',
  class: 'num',
  cell: (s) => s.violations_24h?.toLocaleString() ?? '',
}

export function SchemasPage() {
  const env = currentEnv.value
  const schemas = useApi(() => api<{ data: ListedSchema[] }>('GET', `/v1/schemas${query({ env })}`), [])
  const start = (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    location.hash = schemaHref(String(form.get('name')).trim(), String(form.get('env')).trim() || 'production')
  }
  return (
    <>
      <h1 tabIndex={-1}>Schemas</h1>
      <p class="muted">
        A JSON Schema per event name says what its <code>data</code> must hold; each environment's schema mode (on{' '}
        <a href="#/envs">Environments</a>) says what a violation does.
      </p>
      <form id="new-schema" class="inline-form" onSubmit={start} aria-label="Write a schema for an event name">
        <label>
          Event name
          <input type="text" name="name" required placeholder="shop/order.placed" />
        </label>
        <label>
          Environment
          <input type="text" name="env" defaultValue={env || 'production'} placeholder="production, or branch" />
        </label>
        <button type="submit">Write a schema</button>
      </form>
      <ErrorMessage error={schemas.error} />
      {schemas.loading && !schemas.data ? (
        <Loading />
      ) : schemas.data?.data.length === 0 ? (
        <Empty>
          <p>
            No schemas {env ? `in ${env} ` : ''}yet. Name an event above to write one, or draft it from the events
            already stored.
          </p>
        </Empty>
      ) : (
        schemas.data && (
          <DataTable
            id="schemas"
            caption="Event schemas"
            rows={schemas.data.data}
            rowKey={(s) => `${s.env}:${s.name}`}
            rowId={(s) => `${s.env}:${s.name}`}
            rowHref={(s) => schemaHref(s.name, s.env)}
            columns={
              schemas.data.data.some((s) => s.violations_24h !== undefined) ? [...COLUMNS, VIOLATIONS_COLUMN] : COLUMNS
            }
          />
        )
      )}
    </>
  )
}
