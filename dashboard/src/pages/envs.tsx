// Environments: production, named ones and branch environments, with their limits and schema modes.
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { ErrorMessage, Loading } from '../ui/common.tsx'
import { useApi } from '../ui/use-api.ts'
import { type Column, DataTable } from '../ui/data-table.tsx'

const limits = (e: any) =>
  [
    e.max_events_per_second ? `${e.max_events_per_second} events/s` : 'no rate limit',
    e.max_body_bytes ? `bodies ≤ ${e.max_body_bytes} bytes` : '',
  ]
    .filter(Boolean)
    .join(', ')

const SCHEMA_MODES = ['off', 'warn', 'block'] as const
const UNKNOWN_NAMES = ['allow', 'warn', 'block'] as const

/** A mode of an environment, changed as soon as another is picked (PATCH /v1/envs/<name>). */
function ModeSelect(props: {
  env: { name: string; archived_at: string | null; schema_mode: string; unknown_names: string }
  field: 'schema_mode' | 'unknown_names'
  label: string
  options: readonly string[]
  onChange(patch: Record<string, string>): void
}) {
  if (props.env.archived_at) return props.env[props.field]
  return (
    <select
      class={props.field.replace('_', '-')}
      aria-label={`${props.label} of ${props.env.name}`}
      value={props.env[props.field]}
      onChange={(e) => props.onChange({ [props.field]: e.currentTarget.value })}
    >
      {props.options.map((o) => (
        <option key={o} value={o}>
          {o}
        </option>
      ))}
    </select>
  )
}

export function EnvsPage() {
  const envs = useApi(() => api('GET', '/v1/envs'), [])
  const [error, setError] = useState<Error>()
  const create = (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    const rate = String(form.get('rate') ?? '')
    api('POST', '/v1/envs', {
      name: String(form.get('name')).trim(),
      branch: form.get('branch') === 'on',
      ...(rate && { max_events_per_second: Number(rate) }),
    }).then(() => {
      setError(undefined)
      envs.reload()
    }, setError)
  }
  const archive = (name: string) =>
    api('POST', `/v1/envs/${encodeURIComponent(name)}/archive`).then(envs.reload, setError)
  // Reloaded either way: a refused change puts the select back to the stored mode.
  const patch = (name: string, change: Record<string, string>) =>
    api('PATCH', `/v1/envs/${encodeURIComponent(name)}`, change)
      .then(() => setError(undefined), setError)
      .finally(envs.reload)
  return (
    <>
      <h1 tabIndex={-1}>Environments</h1>
      <form id="create-env" class="inline-form" onSubmit={create} aria-label="Create an environment">
        <label>
          Name
          <input type="text" name="name" required />
        </label>
        <label class="check">
          <input type="checkbox" name="branch" /> branch environment
        </label>
        <label>
          Rate limit (events/s, optional)
          <input type="number" name="rate" min="1" />
        </label>
        <button type="submit">Create environment</button>
      </form>
      <p class="muted small-text">
        Schema violations: <code>off</code> checks nothing, <code>warn</code> accepts and keeps what it broke,{' '}
        <code>block</code> refuses it. Names without a schema: <code>allow</code>, <code>warn</code> or{' '}
        <code>block</code>. The schemas are on <a href="#/schemas">Schemas</a>.
      </p>
      <ErrorMessage error={error ?? envs.error} />
      {envs.loading && !envs.data ? (
        <Loading />
      ) : (
        envs.data && (
          <DataTable<any>
            id="envs"
            caption="Environments"
            rows={envs.data.data}
            rowKey={(e) => e.name}
            rowId={(e) => e.name}
            columns={[
              { header: 'Name', class: 'name group', cell: (e) => e.name },
              { header: 'Kind', cell: (e) => e.kind },
              { header: 'Limits', cell: limits },
              {
                header: 'Schema violations',
                cell: (e) => (
                  <ModeSelect
                    env={e}
                    field="schema_mode"
                    label="Schema mode"
                    options={SCHEMA_MODES}
                    onChange={(c) => patch(e.name, c)}
                  />
                ),
              },
              {
                header: 'Names without a schema',
                cell: (e) => (
                  <ModeSelect
                    env={e}
                    field="unknown_names"
                    label="Names without a schema"
                    options={UNKNOWN_NAMES}
                    onChange={(c) => patch(e.name, c)}
                  />
                ),
              },
              {
                header: 'State',
                hideHeader: true,
                cell: (e) =>
                  e.archived_at ? (
                    'archived'
                  ) : e.kind === 'branch' ? (
                    <button type="button" class="small" onClick={() => archive(e.name)}>
                      Archive
                    </button>
                  ) : (
                    ''
                  ),
              },
            ]}
          />
        )
      )}
    </>
  )
}
