// Users (admins): add one with a password (at least 12 characters), see each one's role, environments
// and how they sign in (password or SSO), remove one (their sessions end at once).
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { ErrorMessage, Loading, Ok } from '../ui/common.tsx'
import { time } from '../ui/format.ts'
import { useApi } from '../ui/use-api.ts'
import { DataTable } from '../ui/data-table.tsx'

type User = { id: string; email: string; role: string; envs: string[] | null; sign_in: string; created_at: string }

export function UsersPage() {
  const users = useApi(() => api<{ data: User[] }>('GET', '/v1/users'), [])
  const [added, setAdded] = useState<string>()
  const [error, setError] = useState<Error>()
  const add = (e: Event) => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const envs = String(data.get('envs') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
    api('POST', '/v1/users', {
      email: String(data.get('email')),
      password: String(data.get('password')),
      role: String(data.get('role')),
      ...(envs.length > 0 && { envs }),
    }).then(({ data: user }) => {
      setError(undefined)
      setAdded(user.email)
      form.reset()
      users.reload()
    }, setError)
  }
  const remove = (id: string) => api('DELETE', `/v1/users/${id}`).then(users.reload, setError)
  return (
    <>
      <h1 tabIndex={-1}>Users</h1>
      <form id="add-user" class="inline-form" onSubmit={add} aria-label="Add a user">
        <label>
          Email
          <input type="email" name="email" required autocomplete="off" />
        </label>
        <label>
          Password (12 characters or more)
          <input type="password" name="password" required minLength={12} autocomplete="new-password" />
        </label>
        <label>
          Role
          <select name="role">
            <option value="viewer">viewer (reads)</option>
            <option value="editor">editor (changes)</option>
            <option value="admin">admin (users, tokens, settings)</option>
          </select>
        </label>
        <label>
          Environments (comma list; empty: all)
          <input type="text" name="envs" />
        </label>
        <button type="submit">Add user</button>
      </form>
      {added && <Ok id="user-added">Added {added}; they sign in with that password.</Ok>}
      <ErrorMessage error={error ?? users.error} />
      {users.loading && !users.data ? (
        <Loading />
      ) : (
        users.data && (
          <DataTable<User>
            id="users"
            caption="Users"
            rows={users.data.data}
            rowKey={(u) => u.id}
            columns={[
              { header: 'Email', cell: (u) => <strong>{u.email}</strong> },
              { header: 'Role', cell: (u) => u.role },
              { header: 'Environments', cell: (u) => u.envs?.join(', ') ?? 'all' },
              { header: 'Signs in with', cell: (u) => (u.sign_in === 'sso' ? 'SSO' : 'password') },
              { header: 'Added', class: 'nowrap', cell: (u) => time(u.created_at) },
              {
                header: 'Actions',
                hideHeader: true,
                cell: (u) => (
                  <button type="button" class="small" onClick={() => remove(u.id)}>
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
