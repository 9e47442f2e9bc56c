// Who may do what on the REST API: three roles, and a permission each route declares in its schema
// (`schema.permission`, api/auth.ts enforces it). `<area>:read` is a viewer's, `<area>:write` an
// editor's (functions, webhooks, keys, replays, pauses), `<area>:admin` an admin's (environments'
// settings, tokens, users, retention, erasure). docs/teams.md has the table.
export const ROLES = ['viewer', 'editor', 'admin'] as const
export type Role = (typeof ROLES)[number]

export type Permission = `${string}:${'read' | 'write' | 'admin'}`

const NEEDS: Record<string, Role> = { read: 'viewer', write: 'editor', admin: 'admin' }

/** The least role that holds `permission`. */
export const roleNeeded = (permission: Permission): Role => NEEDS[permission.slice(permission.lastIndexOf(':') + 1)]

export const roleAllows = (role: Role, permission: Permission): boolean =>
  ROLES.indexOf(role) >= ROLES.indexOf(roleNeeded(permission))

export const isPermission = (value: unknown): value is Permission =>
  typeof value === 'string' && /^[a-z-]+:(read|write|admin)$/.test(value)
