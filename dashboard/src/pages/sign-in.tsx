// Sign-in: shown when the server asks who is calling (401) and no signing key or token is set. An
// email and a password start a session (POST /v1/auth/login sets an HttpOnly cookie); the CSRF token it
// answers goes with every call after. Machines and the server's owner use the header's key field.
import { useState } from 'preact/hooks'
import { api, authEpoch, csrfToken } from '../api.ts'
import { ErrorMessage } from '../ui/common.tsx'

export function SignInPage() {
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
