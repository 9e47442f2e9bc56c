// Apps on the Inngest SDKs: each app's URL, SDK, framework, functions with their triggers, and its
// last sync with its error; sync one by URL, sync again, remove (docs/inngest-sdk.md).
import { useState } from 'preact/hooks'
import { api, currentEnv } from '../api.ts'
import { Empty, ErrorMessage, Loading, Ok } from '../ui/common.tsx'
import { time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { DataTable } from '../ui/data-table.tsx'

type Trigger = { event?: string; if?: string; cron?: string }
type Fn = { id: string; app_id: string; env: string; triggers: Trigger[] }
type App = {
  id: string
  env: string
  url: string
  sdk: { language: string; version: string }
  framework: string | null
  functions: string[]
  sync_kind: string | null
  synced_at: string
  error: { code: string; message: string; at: string } | null
}

const triggerText = (t: Trigger) => (t.cron ? `cron ${t.cron}` : `${t.event}${t.if ? ` if ${t.if}` : ''}`)

export function AppsPage() {
  const env = currentEnv.value || 'production'
  const apps = useApi(() => api<{ data: App[] }>('GET', `/v1/apps?env=${encodeURIComponent(env)}`), [env])
  const functions = useApi(() => api<{ data: Fn[] }>('GET', `/v1/functions?env=${encodeURIComponent(env)}`), [env])
  const [error, setError] = useState<Error>()
  const [synced, setSynced] = useState<string>()
  const sync = (url: string) =>
    api<{ data: App }>('POST', '/v1/apps', { url, env }).then(({ data }) => {
      setError(undefined)
      setSynced(`Synced ${data.id}: ${data.functions.length} functions.`)
      apps.reload()
      functions.reload()
    }, setError)
  const remove = (app: App) =>
    api('DELETE', `/v1/apps/${encodeURIComponent(app.id)}?env=${encodeURIComponent(app.env)}`).then(() => {
      apps.reload()
      functions.reload()
    }, setError)
  const triggersOf = (key: string) => functions.data?.data.find((f) => f.id === key)?.triggers ?? []
  return (
    <>
      <h1 tabIndex={-1}>Apps</h1>
      <form
        id="sync-app"
        class="inline-form"
        aria-label="Sync an app"
        onSubmit={(e) => {
          e.preventDefault()
          sync(String(new FormData(e.currentTarget as HTMLFormElement).get('url')))
        }}
      >
        <label>
          The app's serve() URL
          <input type="url" name="url" required placeholder="http://127.0.0.1:3000/api/inngest" />
        </label>
        <button type="submit">Sync app</button>
      </form>
      {synced && <Ok id="synced">{synced}</Ok>}
      <ErrorMessage error={error ?? apps.error} />
      {apps.loading && !apps.data ? (
        <Loading />
      ) : apps.data?.data.length === 0 ? (
        <Empty>
          <p>
            No apps in {env}. An app written with Inngest's SDKs syncs here by its URL above, with{' '}
            <code>sluice apps sync URL</code>, or with <code>sluice dev -u URL</code>.
          </p>
        </Empty>
      ) : (
        apps.data && (
          <DataTable<App>
            id="apps"
            caption="Apps"
            rows={apps.data.data}
            rowKey={(a) => `${a.env}/${a.id}`}
            columns={[
              { header: 'App', cell: (a) => <strong>{a.id}</strong> },
              { header: 'URL', class: 'mono break', cell: (a) => a.url },
              { header: 'SDK', cell: (a) => `${a.sdk.language} ${a.sdk.version}` },
              { header: 'Framework', cell: (a) => a.framework ?? '—' },
              {
                header: 'Functions',
                cell: (a) => (
                  <ul class="plain">
                    {a.functions.map((key) => (
                      <li key={key}>
                        <a href={`#/runs?function=${encodeURIComponent(key)}`}>{key}</a>{' '}
                        <small>{triggersOf(key).map(triggerText).join(', ')}</small>
                      </li>
                    ))}
                  </ul>
                ),
              },
              {
                header: 'Last sync',
                cell: (a) => (
                  <>
                    {time(a.synced_at)} {a.sync_kind === 'out_of_band' ? '(the app registered)' : ''}
                    {a.error && (
                      <p class="error" role="alert">
                        {a.error.code}: {a.error.message} ({time(a.error.at)})
                      </p>
                    )}
                  </>
                ),
              },
              {
                header: 'Actions',
                hideHeader: true,
                cell: (a) => (
                  <>
                    <button type="button" class="small" onClick={() => sync(a.url)}>
                      Sync again
                    </button>{' '}
                    <button type="button" class="small" onClick={() => remove(a)}>
                      Remove
                    </button>
                  </>
                ),
              },
            ]}
          />
        )
      )}
    </>
  )
}
