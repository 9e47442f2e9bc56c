// The compatibility rule of embedded mode (docs/schemas.md, "Compatibility"): a new version may not
// refuse what the previous one accepted. Exact backward compatibility of two JSON Schemas is
// undecidable in general, so this checks a documented subset, walking both schemas side by side:
// no new required property, no narrowed type, no removed enum value, no tighter bound, no closed
// object, no new pattern/format/const, and any other keyword (anyOf, $ref, if…) left unchanged.
// As in the registry's checker (Apicurio's), adding an optional property is compatible only to an
// object with `additionalProperties: false`: to an open one it narrows what that field may hold.
import { isDeepStrictEqual } from 'node:util'
import { escapePointer } from './schema-compile.ts'

export type Compatibility = { ok: true } | { ok: false; pointer: string; message: string }

type Schema = Record<string, unknown> | boolean

const LOWER_BOUNDS = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'minContains']
const UPPER_BOUNDS = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains']
const ADDED_IS_NARROWER = ['pattern', 'format', 'const', 'multipleOf', 'uniqueItems']
// Checked by the walk (or annotations that accept nothing less).
const WALKED = new Set([
  ...LOWER_BOUNDS,
  ...UPPER_BOUNDS,
  ...ADDED_IS_NARROWER,
  'type',
  'required',
  'enum',
  'properties',
  'additionalProperties',
  'items',
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'examples',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
])

export function checkCompatible(previous: Schema, next: Schema, pointer = ''): Compatibility {
  const fault = (at: string, message: string): Compatibility => ({ ok: false, pointer: at, message })
  if (next === true || isDeepStrictEqual(previous, next)) return { ok: true }
  if (next === false) return fault(pointer, 'refuses every value')
  if (previous === false) return { ok: true }
  const old = previous === true ? {} : previous
  const at = (keyword: string) => `${pointer}/${keyword}`

  const oldTypes = typesOf(old.type)
  const newTypes = typesOf(next.type)
  if (newTypes) {
    if (!oldTypes) return fault(at('type'), `added: only ${newTypes.join(', ')} where any value was accepted`)
    const lost = oldTypes.filter((t) => !newTypes.includes(t) && !(t === 'integer' && newTypes.includes('number')))
    if (lost.length > 0) return fault(at('type'), `no longer accepts ${lost.join(', ')}`)
  }
  const oldRequired = new Set((old.required as string[] | undefined) ?? [])
  const added = ((next.required as string[] | undefined) ?? []).filter((name) => !oldRequired.has(name))
  if (added.length > 0) return fault(at('required'), `newly required: ${added.join(', ')}`)
  if (next.enum !== undefined) {
    const kept = next.enum as unknown[]
    if (old.enum === undefined) return fault(at('enum'), 'added: it refuses values the previous version accepted')
    const removed = (old.enum as unknown[]).filter((v) => !kept.some((k) => isDeepStrictEqual(k, v)))
    if (removed.length > 0) return fault(at('enum'), `removed ${removed.map((v) => JSON.stringify(v)).join(', ')}`)
  }
  for (const keyword of LOWER_BOUNDS)
    if (next[keyword] !== undefined && !((old[keyword] as number) >= (next[keyword] as number)))
      return fault(at(keyword), `raised to ${next[keyword]}`)
  for (const keyword of UPPER_BOUNDS)
    if (next[keyword] !== undefined && !((old[keyword] as number) <= (next[keyword] as number)))
      return fault(at(keyword), `lowered to ${next[keyword]}`)
  for (const keyword of ADDED_IS_NARROWER)
    if (next[keyword] !== undefined && !isDeepStrictEqual(old[keyword], next[keyword]))
      return fault(at(keyword), old[keyword] === undefined ? 'added' : 'changed')

  const oldProps = (old.properties as Record<string, Schema> | undefined) ?? {}
  const newProps = (next.properties as Record<string, Schema> | undefined) ?? {}
  // A property the previous version did not name was checked by its additionalProperties (any value
  // when absent): typing it narrows an open object, as the registry's checker also says.
  const oldExtra = (old.additionalProperties as Schema | undefined) ?? true
  for (const [name, schema] of Object.entries(newProps)) {
    const pointer = `${at('properties')}/${escapePointer(name)}`
    const result = checkCompatible(name in oldProps ? oldProps[name] : oldExtra, schema, pointer)
    if (!result.ok) return result
  }
  if (next.additionalProperties !== undefined) {
    const result = checkCompatible(oldExtra, next.additionalProperties as Schema, at('additionalProperties'))
    if (!result.ok) return result
    if (next.additionalProperties === false) {
      const dropped = Object.keys(oldProps).filter((name) => !(name in newProps))
      if (dropped.length > 0) return fault(at('properties'), `removed with additionalProperties false: ${dropped}`)
    }
  }
  if (next.items !== undefined) {
    const result = checkCompatible((old.items as Schema | undefined) ?? true, next.items as Schema, at('items'))
    if (!result.ok) return result
  }
  for (const keyword of new Set([...Object.keys(old), ...Object.keys(next)])) {
    if (WALKED.has(keyword) || isDeepStrictEqual(old[keyword], next[keyword])) continue
    return fault(at(keyword), 'changed: only the keywords of docs/schemas.md are compared, the others must stay equal')
  }
  return { ok: true }
}

function typesOf(type: unknown): string[] | undefined {
  if (type === undefined) return undefined
  return Array.isArray(type) ? (type as string[]) : [type as string]
}
