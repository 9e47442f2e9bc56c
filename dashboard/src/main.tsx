// The Sluice dashboard: Preact pages over the REST API (/v1), routed by the URL hash.
import { render } from 'preact'
import { signal } from '@preact/signals'
import { useEffect } from 'preact/hooks'
import { Header, type Me } from './header.tsx'
import { SignInPage } from './pages/sign-in.tsx'
import { useApi } from './ui/use-api.ts'
import { EventsPage } from './pages/events.tsx'
import { EventPage } from './pages/event.tsx'
import { FunctionsPage } from './pages/functions.tsx'
import { AppsPage } from './pages/apps.tsx'
import { RunsPage } from './pages/runs.tsx'
import { RunPage } from './pages/run.tsx'
import { WebhooksPage } from './pages/webhooks.tsx'
import { IncidentsPage } from './pages/incidents.tsx'
import { WebhookPage } from './pages/webhook.tsx'
import { KeysPage } from './pages/keys.tsx'
import { TokensPage } from './pages/tokens.tsx'
import { UsersPage } from './pages/users.tsx'
import { AuditPage } from './pages/audit.tsx'
import { EnvsPage } from './pages/envs.tsx'
import { SendPage } from './pages/send.tsx'
import { InsightsPage } from './pages/insights.tsx'
import { SchemasPage } from './pages/schemas.tsx'
import { SchemaPage } from './pages/schema.tsx'
import { ApiError, api, csrfToken, currentEnv } from './api.ts'
import './style.css'

const hash = signal(location.hash)
window.addEventListener('hashchange', () => {
  hash.value = location.hash
})

export interface Route {
  path: string
  params: URLSearchParams
}

function parse(value: string): Route {
  const [path, search] = (value.slice(1) || '/events').split('?')
  return { path, params: new URLSearchParams(search) }
}

// Keyed by ID: a link from one run to another (an invoked run) starts a fresh page, not one that keeps
// the previous run's messages and half-asked questions.
const DETAIL_PAGES: Array<[RegExp, (id: string, params: URLSearchParams) => preact.JSX.Element]> = [
  [/^\/events\/(.+)$/, (id) => <EventPage key={id} id={id} />],
  [/^\/runs\/(.+)$/, (id) => <RunPage key={id} id={id} />],
  [/^\/webhooks\/(.+)$/, (id) => <WebhookPage key={id} id={id} />],
  [/^\/schemas\/(.+)$/, (name, params) => <SchemaAt name={name} env={params.get('env')} />],
]

/** A schema link names its environment; without one, the header's, else production. */
function SchemaAt({ name, env }: { name: string; env: string | null }) {
  const shown = env || currentEnv.value || 'production'
  return <SchemaPage key={`${shown}:${name}`} name={name} env={shown} />
}

function Page({ route }: { route: Route }) {
  for (const [pattern, page] of DETAIL_PAGES) {
    const match = pattern.exec(route.path)
    if (match) return page(decodeURIComponent(match[1]), route.params)
  }
  switch (route.path) {
    case '/functions':
      return <FunctionsPage />
    case '/apps':
      return <AppsPage />
    case '/runs':
      return <RunsPage params={route.params} />
    case '/webhooks':
      return <WebhooksPage />
    case '/schemas':
      return <SchemasPage />
    case '/incidents':
      return <IncidentsPage />
    case '/keys':
      return <KeysPage />
    case '/tokens':
      return <TokensPage />
    case '/users':
      return <UsersPage />
    case '/audit':
      return <AuditPage />
    case '/envs':
      return <EnvsPage />
    case '/send':
      return <SendPage />
    case '/insights':
      return <InsightsPage params={route.params} />
    default:
      return <EventsPage params={route.params} />
  }
}

function App() {
  const route = parse(hash.value)
  const me = useApi(() => api<Me>('GET', '/v1/auth/me'), [])
  // After a reload the session's cookie is still there; its CSRF token comes back with who is signed in.
  if (me.data?.data.csrf_token && me.data.data.csrf_token !== csrfToken.value) csrfToken.value = me.data.data.csrf_token
  const signIn = me.error instanceof ApiError && me.error.status === 401
  // Narrowed to environments: the header's choice starts at one of them, as every list names one.
  const own = me.data?.data.envs
  if (own && own.length > 0 && !own.includes(currentEnv.value)) currentEnv.value = own[0]
  // A new page starts at the top, with focus on its heading for keyboard and screen-reader users.
  useEffect(() => {
    window.scrollTo(0, 0)
    document.querySelector<HTMLElement>('main h1')?.focus({ preventScroll: true })
  }, [route.path])
  return (
    <>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link; the click moves focus without changing the hash route */}
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault()
          document.getElementById('main')?.focus()
        }}
      >
        Skip to content
      </a>
      <Header path={route.path} me={me} />
      <main id="main" tabIndex={-1}>
        {signIn ? <SignInPage /> : <Page route={route} />}
      </main>
    </>
  )
}

render(<App />, document.getElementById('app')!)
