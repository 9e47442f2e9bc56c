// A schema drafted from stored events (docs/schemas.md, "Drafting from traffic"): what every
// sampled `data` had in common, as a JSON Schema the user reviews before pushing. Pure: events in,
// schema out. Open objects (no `additionalProperties`), so the draft never refuses an unseen field.
import { FORMATS } from './schema-compile.ts'

/** Strings of one field get an `enum` when they take at most this many values… */
export const ENUM_MAX_VALUES = 10
/** …over at least this many samples (fewer prove nothing about the cardinality). */
export const ENUM_MIN_SAMPLES = 20
/** Formats proposed when every string of a field matches, the most specific first. */
const DRAFT_FORMATS = ['uuid', 'date-time', 'email', 'uri'] as const

type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object'
const TYPE_ORDER: JsonType[] = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']

/** What the values seen at one place of `data` had. */
interface Shape {
  types: Set<JsonType>
  strings: number
  /** Distinct strings and their counts, until there are more than ENUM_MAX_VALUES (then null). */
  distinct: Map<string, number> | null
  /** Formats every string so far matched. */
  formats: Set<(typeof DRAFT_FORMATS)[number]>
  objects: number
  /** Per property, the shape of its values and in how many objects it was present (null counts). */
  properties: Map<string, { shape: Shape; present: number }>
  items: Shape | undefined
}

const newShape = (): Shape => ({
  types: new Set(),
  strings: 0,
  distinct: new Map(),
  formats: new Set(DRAFT_FORMATS),
  objects: 0,
  properties: new Map(),
  items: undefined,
})

function typeOf(value: unknown): JsonType {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value as JsonType
}

function observe(shape: Shape, value: unknown): void {
  const type = typeOf(value)
  shape.types.add(type)
  if (type === 'string') {
    const text = value as string
    shape.strings++
    if (shape.distinct) {
      shape.distinct.set(text, (shape.distinct.get(text) ?? 0) + 1)
      if (shape.distinct.size > ENUM_MAX_VALUES) shape.distinct = null
    }
    for (const format of shape.formats) if (!FORMATS[format].test(text)) shape.formats.delete(format)
  } else if (type === 'object') {
    shape.objects++
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      let property = shape.properties.get(key)
      if (!property) {
        property = { shape: newShape(), present: 0 }
        shape.properties.set(key, property)
      }
      property.present++
      observe(property.shape, inner)
    }
  } else if (type === 'array') {
    const items = value as unknown[]
    if (items.length > 0) shape.items ??= newShape()
    for (const item of items) observe(shape.items!, item)
  }
}

function toSchema(shape: Shape): Record<string, unknown> {
  const types = new Set(shape.types)
  if (types.has('number')) types.delete('integer') // 1 and 1.5 at one place: a number
  const ordered = TYPE_ORDER.filter((t) => types.has(t))
  const schema: Record<string, unknown> = {}
  if (ordered.length === 1) schema.type = ordered[0]
  else if (ordered.length > 1) schema.type = ordered
  const onlyStrings = ordered.every((t) => t === 'string' || t === 'null')
  if (types.has('string') && onlyStrings) {
    if (shape.distinct && shape.strings >= ENUM_MIN_SAMPLES) {
      const values: Array<string | null> = [...shape.distinct.keys()].sort()
      schema.enum = types.has('null') ? [...values, null] : values
    } else {
      const [format] = shape.formats
      if (format !== undefined) schema.format = format
    }
  }
  if (types.has('object')) {
    const properties: Record<string, unknown> = {}
    const required: string[] = []
    for (const [key, property] of shape.properties) {
      properties[key] = toSchema(property.shape)
      if (property.present === shape.objects) required.push(key)
    }
    if (shape.properties.size > 0) schema.properties = properties
    if (required.length > 0) schema.required = required
  }
  if (types.has('array') && shape.items) schema.items = toSchema(shape.items)
  return schema
}

/** The JSON Schema (draft 2020-12) of `data` that every one of `samples` satisfies. */
export function draftSchema(samples: Iterable<Record<string, unknown>>): Record<string, unknown> {
  const root = newShape()
  for (const data of samples) observe(root, data)
  const schema = toSchema(root)
  return { ...schema, type: 'object' }
}
