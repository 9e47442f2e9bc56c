// What changes between two schemas, as JSON pointers into the schema (`/properties/amount/type`):
// the draft route shows it before the user pushes. Objects are walked key by key; arrays
// (`required`, `enum`, a `type` list) and other values are compared whole, as one change.
import { escapePointer } from './schema-compile.ts'

export type SchemaChange =
  | { op: 'add'; path: string; to: unknown }
  | { op: 'remove'; path: string; from: unknown }
  | { op: 'change'; path: string; from: unknown; to: unknown }

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => same(v, b[i]))
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && same(a[k], b[k]))
  }
  return false
}

/** The changes that turn `from` into `to`, in the order of their keys (`from`'s first). */
export function diffSchemas(from: unknown, to: unknown, path = ''): SchemaChange[] {
  if (same(from, to)) return []
  if (!isObject(from) || !isObject(to)) return [{ op: 'change', path, from, to }]
  const changes: SchemaChange[] = []
  for (const [key, value] of Object.entries(from)) {
    const here = `${path}/${escapePointer(key)}`
    if (!(key in to)) changes.push({ op: 'remove', path: here, from: value })
    else changes.push(...diffSchemas(value, to[key], here))
  }
  for (const [key, value] of Object.entries(to))
    if (!(key in from)) changes.push({ op: 'add', path: `${path}/${escapePointer(key)}`, to: value })
  return changes
}
