// Event keys: a created key is shown once.
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { CopyButton, Empty, ErrorMessage, Loading, Ok } from '../ui/common.tsx'
import { time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'

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
          <div class="table-wrap">
            <table id="keys" class="list">
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Env</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="sr-only">State</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.data.map((k: any) => (
                  <tr key={k.id}>
                    <td class="mono">{k.prefix}…</td>
                    <td>{k.env}</td>
                    <td class="nowrap">{time(k.created_at)}</td>
                    <td>
                      {k.revoked_at ? (
                        `revoked ${time(k.revoked_at)}`
                      ) : (
                        <button type="button" class="small" onClick={() => revoke(k.id)}>
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      )}
    </>
  )
}
