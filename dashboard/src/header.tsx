import { api, authEpoch, csrfToken, currentEnv, signingKey } from './api.ts'
import type { Loaded } from './ui/use-api.ts'
import { useApi } from './ui/use-api.ts'

const NAV = [
  ['/events', 'Events'],
  ['/functions', 'Functions'],
  ['/apps', 'Apps'],
  ['/runs', 'Runs'],
  ['/webhooks', 'Webhooks'],
  ['/schemas', 'Schemas'],
  ['/incidents', 'Incidents'],
  ['/insights', 'Insights'],
  ['/keys', 'Keys'],
  ['/envs', 'Environments'],
  ['/send', 'Send event'],
] as const
/** Shown to admins only (GET /v1/auth/me). */
const ADMIN_NAV = [
  ['/users', 'Users'],
  ['/tokens', 'Tokens'],
  ['/audit', 'Audit'],
] as const

export type Me = {
  data: { kind: string; name: string | null; role: string; envs: string[] | null; csrf_token?: string }
}

/** Production, named environments and each active branch environment. */
function EnvSwitcher() {
  const envs = useApi(
    () => api<{ data: Array<{ name: string; kind: string; archived_at: string | null }> }>('GET', '/v1/envs'),
    [],
  )
  const active = (envs.data?.data ?? []).filter((e) => !e.archived_at)
  const names = active.map((e) => e.name)
  if (currentEnv.value && !names.includes(currentEnv.value)) names.push(currentEnv.value)
  return (
    <label class="env-switcher">
      <span>Environment</span>
      <select
        id="env-switcher"
        value={currentEnv.value}
        onChange={(e) => {
          currentEnv.value = e.currentTarget.value
        }}
      >
        <option value="">All environments</option>
        {names.map((name) => {
          const kind = active.find((e) => e.name === name)?.kind
          return (
            <option key={name} value={name}>
              {kind === 'branch' ? `${name} (branch)` : name}
            </option>
          )
        })}
      </select>
    </label>
  )
}

function signOut() {
  api('POST', '/v1/auth/logout').finally(() => {
    csrfToken.value = ''
    authEpoch.value++
  })
}

export function Header({ path, me }: { path: string; me: Loaded<Me> }) {
  const who = me.data?.data
  const nav = who?.role === 'admin' ? [...NAV, ...ADMIN_NAV] : NAV
  return (
    <header class="top">
      <a class="brand" href="#/events">
        Sluice
      </a>
      <nav aria-label="Main">
        {nav.map(([href, label]) => (
          <a
            key={href}
            href={`#${href}`}
            class={path.startsWith(href) ? 'active' : undefined}
            aria-current={path.startsWith(href) ? 'page' : undefined}
          >
            {label}
          </a>
        ))}
      </nav>
      <div class="header-tools">
        <EnvSwitcher />
        {who && (
          <span id="signed-in" class="signed-in">
            {who.kind === 'token' || who.kind === 'user'
              ? `${who.name} (${who.role})`
              : who.kind === 'dev'
                ? 'dev mode'
                : 'signing key (admin)'}
          </span>
        )}
        {who?.kind === 'user' && !signingKey.value && (
          <button type="button" id="sign-out" onClick={signOut}>
            Sign out
          </button>
        )}
        <label class="signing">
          <span>Signing key or API token</span>
          <input
            id="signing-key"
            type="password"
            placeholder="only for sluice start"
            autocomplete="off"
            value={signingKey.value}
            onChange={(e) => {
              signingKey.value = e.currentTarget.value
            }}
          />
        </label>
      </div>
    </header>
  )
}
