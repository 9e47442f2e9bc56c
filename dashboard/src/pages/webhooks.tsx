// Webhooks: the list and a form to create one.
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { CopyButton, Empty, ErrorMessage, Loading } from '../ui/common.tsx'
import { useApi } from '../ui/use-api.ts'
import { type Column, DataTable } from '../ui/data-table.tsx'

const WEBHOOK_COLUMNS: Array<Column<any>> = [
  { header: 'Name', class: 'name', cell: (w) => <a href={`#/webhooks/${w.id}`}>{w.name}</a> },
  { header: 'Env', cell: (w) => w.env },
  {
    header: 'URL',
    class: 'url',
    cell: (w) => (
      <>
        <code class="clip">{w.url}</code> <CopyButton text={w.url} label="Copy URL" />
      </>
    ),
  },
  { header: 'State', hideHeader: true, cell: (w) => (w.disabled ? 'disabled' : '') },
]

export function WebhooksPage() {
  const webhooks = useApi(() => api('GET', '/v1/webhooks'), [])
  const [error, setError] = useState<Error>()
  const create = async (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    const env = String(form.get('env')).trim()
    await api('POST', '/v1/webhooks', { name: String(form.get('name')).trim(), ...(env && { env }) }).then(
      ({ data }) => {
        location.hash = `#/webhooks/${data.id}`
      },
      setError,
    )
  }
  return (
    <>
      <h1 tabIndex={-1}>Webhooks</h1>
      <form id="create-webhook" class="inline-form" onSubmit={create} aria-label="Create a webhook">
        <label>
          Name
          <input type="text" name="name" required placeholder="stripe" />
        </label>
        <label>
          Environment
          <input type="text" name="env" placeholder="production, or branch" />
        </label>
        <button type="submit">Create webhook</button>
      </form>
      <ErrorMessage error={error ?? webhooks.error} />
      {webhooks.loading && !webhooks.data ? (
        <Loading />
      ) : webhooks.data?.data.length === 0 ? (
        <Empty>
          <p>
            No webhooks yet. Create one above, then give its URL to the service that sends them (Stripe, GitHub, …).
          </p>
        </Empty>
      ) : (
        webhooks.data && (
          <DataTable
            id="webhooks"
            caption="Webhooks"
            rows={webhooks.data.data}
            rowKey={(w) => w.id}
            columns={WEBHOOK_COLUMNS}
          />
        )
      )}
    </>
  )
}
