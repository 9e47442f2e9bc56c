// Sign-in: shown when the server asks who is calling (401) and no signing key or token is set. An
// email and a password start a session (POST /v1/auth/login sets an HttpOnly cookie); the CSRF token it
// answers goes with every call after; or through the OpenID Provider ("Sign in with SSO"), which
// comes back with the cookie set. Machines and the server's owner use the header's key field.
import { useState } from 'preact/hooks'
import { api, authEpoch, csrfToken } from '../api.ts'
import { ErrorMessage } from '../ui/common.tsx'
import { useApi } from '../ui/use-api.ts'

export function SignInPage() {
  const providers = useApi(() => api<{ data: { sso: boolean } }>('GET', '/v1/auth/providers'), [])
  const [error, setError] = useState<Error>()
  const [busy, setBusy] = useState(false)
  const submit = (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    setBusy(true)
    api<{ data: { csrf_token: string } }>('POST', '/v1/auth/login', {
      email: String(form.get('email') ?? ''),
      password: String(form.get('password') ?? ''),
    }).then(
      ({ data }) => {
        csrfToken.value = data.csrf_token
        authEpoch.value++
      },
      (err: Error) => {
        setBusy(false)
        setError(err)
      },
    )
  }
  return (
    <>
      <h1 tabIndex={-1}>Sign in</h1>
      {providers.data?.data.sso && (
        <p>
          <a id="sso" class="button" href="/v1/auth/oidc/login">
            Sign in with SSO
          </a>
        </p>
      )}
      <form id="sign-in" class="inline-form" onSubmit={submit} aria-label="Sign in">
        <label>
          Email
          <input type="email" name="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input type="password" name="password" autocomplete="current-password" required />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <ErrorMessage error={error} />
      </form>
      <p>The server's signing key or an API token goes in the field at the top right instead.</p>
    </>
  )
}
