// Event keys: a created key is shown once.
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { CopyButton, Empty, ErrorMessage, Loading, Ok } from '../ui/common.tsx'
import { time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { type Column, DataTable } from '../ui/data-table.tsx'

export function KeysPage() {
  const keys = useApi(() => api('GET', '/v1/keys'), [])
  const [created, setCreated] = useState<string>()
  const [error, setError] = useState<Error>()
  const create = (e: Event) => {
    e.preventDefault()
    const env = String(new FormData(e.currentTarget as HTMLFormElement).get('env'))
    api('POST', '/v1/keys', { env }).then(({ data }) => {
      setCreated(data.key)
      keys.reload()
    }, setError)
  }
  const revoke = (id: string) => api('DELETE', `/v1/keys/${id}`).then(keys.reload, setError)
  return (
    <>
      <h1 tabIndex={-1}>Event keys</h1>
      <form id="create-key" class="inline-form" onSubmit={create} aria-label="Create an event key">
        <label>
          Environment (or "branch" for the branch group)
          <input type="text" name="env" value="production" />
        </label>
        <button type="submit">Create key</button>
      </form>
      <div id="created-key">
        {created && (
          <>
            <Ok>Copy this key now; it is not shown again:</Ok>
            <p>
              <code id="new-key" class="break">
                {created}
              </code>{' '}
              <CopyButton text={created} />
            </p>
          </>
        )}
      </div>
      <ErrorMessage error={error ?? keys.error} />
      {keys.loading && !keys.data ? (
        <Loading />
      ) : keys.data?.data.length === 0 ? (
        <Empty>
          <p>
            No event keys. The Dev Server accepts any key; on <code>sluice start</code> create one above for each
            producer.
          </p>
        </Empty>
      ) : (
        keys.data && (
          <DataTable<any>
            id="keys"
            caption="Event keys"
            rows={keys.data.data}
            rowKey={(k) => k.id}
            columns={[
              { header: 'Key', class: 'mono', cell: (k) => `${k.prefix}…` },
              { header: 'Env', cell: (k) => k.env },
              { header: 'Created', class: 'nowrap', cell: (k) => time(k.created_at) },
              {
                header: 'State',
                hideHeader: true,
                cell: (k) =>
                  k.revoked_at ? (
                    `revoked ${time(k.revoked_at)}`
                  ) : (
                    <button type="button" class="small" onClick={() => revoke(k.id)}>
                      Revoke
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
