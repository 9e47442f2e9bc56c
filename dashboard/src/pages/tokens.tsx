// API tokens (admins): create one (shown once), see each one's role, environments and last use, remove.
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { CopyButton, ErrorMessage, Loading, Ok } from '../ui/common.tsx'
import { time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { DataTable } from '../ui/data-table.tsx'

type Token = {
  id: string
  name: string
  role: string
  envs: string[] | null
  prefix: string
  created_at: string
  expires_at: string | null
  last_used_at: string | null
}

export function TokensPage() {
  const tokens = useApi(() => api<{ data: Token[] }>('GET', '/v1/tokens'), [])
  const [created, setCreated] = useState<string>()
  const [error, setError] = useState<Error>()
  const create = (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    const envs = String(form.get('envs') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
    const days = String(form.get('days') ?? '')
    api('POST', '/v1/tokens', {
      name: String(form.get('name')),
      role: String(form.get('role')),
      ...(envs.length > 0 && { envs }),
      ...(days && { expires_in_days: Number(days) }),
    }).then(({ data }) => {
      setError(undefined)
      setCreated(data.token)
      tokens.reload()
    }, setError)
  }
  const remove = (id: string) => api('DELETE', `/v1/tokens/${id}`).then(tokens.reload, setError)
  return (
    <>
      <h1 tabIndex={-1}>API tokens</h1>
      <form id="create-token" class="inline-form" onSubmit={create} aria-label="Create an API token">
        <label>
          Name
          <input type="text" name="name" required />
        </label>
        <label>
          Role
          <select name="role">
            <option value="viewer">viewer (reads)</option>
            <option value="editor">editor (changes)</option>
            <option value="admin">admin (tokens, settings)</option>
          </select>
        </label>
        <label>
          Environments (comma list; empty: all)
          <input type="text" name="envs" />
        </label>
        <label>
          Expires in days
          <input type="number" name="days" min="1" max="3650" />
        </label>
        <button type="submit">Create token</button>
      </form>
      {created && (
        <div id="created-token">
          <Ok>Copy this token now; it is not shown again:</Ok>
          <p>
            <code id="new-token" class="break">
              {created}
            </code>{' '}
            <CopyButton text={created} />
          </p>
        </div>
      )}
      <ErrorMessage error={error ?? tokens.error} />
      {tokens.loading && !tokens.data ? (
        <Loading />
      ) : (
        tokens.data && (
          <DataTable<Token>
            id="tokens"
            caption="API tokens"
            rows={tokens.data.data}
            rowKey={(t) => t.id}
            columns={[
              { header: 'Name', cell: (t) => <strong>{t.name}</strong> },
              { header: 'Token', class: 'mono', cell: (t) => `${t.prefix}…` },
              { header: 'Role', cell: (t) => t.role },
              { header: 'Environments', cell: (t) => t.envs?.join(', ') ?? 'all' },
              { header: 'Last used', class: 'nowrap', cell: (t) => (t.last_used_at ? time(t.last_used_at) : 'never') },
              { header: 'Expires', class: 'nowrap', cell: (t) => (t.expires_at ? time(t.expires_at) : 'never') },
              {
                header: 'Actions',
                hideHeader: true,
                cell: (t) => (
                  <button type="button" class="small" onClick={() => remove(t.id)}>
                    Remove
                  </button>
                ),
              },
            ]}
          />
        )
      )}
    </>
  )
}
