// The kinds of setting (integer, text, choice, switch, list): each turns one declaration into the schema
// that checks it, the parse of its variable or flag, and the range --help and docs/configuration.md show.
// The schemas are plain JSON Schema typed as TypeBox's: --help and the control commands read this table
// without loading TypeBox (~19 MB); config.ts, which only the server commands load, checks with it.
import type { TArray, TBoolean, TInteger, TLiteral, TSchema, TString, TUnion } from '@sinclair/typebox'

export interface Setting<S extends TSchema = TSchema, D = unknown> {
  /** The environment variable: named here, not derived, so renaming a field cannot rename it. */
  readonly env: string
  /** The flag without its dashes, when it is not the kebab-case name. */
  readonly flag?: string
  /** Its type and range. */
  readonly schema: S
  /** undefined: unset unless given (the setting is optional). */
  readonly default: D
  /** One line for --help; docs/configuration.md says more. */
  readonly doc: string
  /** Also read from a file, `SLUICE_X_FILE` / `--x-file` (a mounted Kubernetes Secret); never logged. */
  readonly secret?: boolean
  /** An environment variable's or flag's text to the value the schema checks. */
  readonly parse: (text: string) => unknown
}

interface Declared<D> {
  env: string
  doc: string
  flag?: string
  default?: D
}

/** The schema's `maximum` when the setting names none: still a bound, so a huge number is refused. */
const NO_MAXIMUM = Number.MAX_SAFE_INTEGER

export function int<D extends number | undefined = undefined>(
  d: Declared<D> & { min: number; max?: number },
): Setting<TInteger, D> {
  const schema = { type: 'integer', minimum: d.min, maximum: d.max ?? NO_MAXIMUM } as unknown as TInteger
  return { env: d.env, flag: d.flag, doc: d.doc, default: d.default as D, schema, parse: Number }
}

export function text<D extends string | undefined = undefined>(
  d: Declared<D> & { minLength?: number; pattern?: string; secret?: boolean },
): Setting<TString, D> {
  const schema = stringSchema(d.minLength ?? 1, d.pattern)
  return { env: d.env, flag: d.flag, doc: d.doc, default: d.default as D, schema, secret: d.secret, parse: String }
}

type Choices = readonly [string, ...string[]]
const literals = <C extends Choices>(of: C) =>
  ({ anyOf: of.map((v) => ({ const: v, type: 'string' })) }) as unknown as TUnion<TLiteral<C[number]>[]>
const stringSchema = (minLength: number, pattern?: string) =>
  ({ type: 'string', minLength, ...(pattern && { pattern }) }) as unknown as TString

/** One of `of`, in any case (`LZ4` is `lz4`). */
export function choice<const C extends Choices, D extends C[number] | undefined = undefined>(
  of: C,
  d: Declared<D>,
): Setting<TUnion<TLiteral<C[number]>[]>, D> {
  const schema = literals(of)
  return { env: d.env, flag: d.flag, doc: d.doc, default: d.default as D, schema, parse: (v) => v.toLowerCase() }
}

const BOOLEANS: Record<string, boolean> = { true: true, 1: true, false: false, 0: false }

/** true or false (also 1 or 0); other text is left for the schema to refuse, naming the setting. */
export function bool<D extends boolean>(d: Declared<D> & { default: D }): Setting<TBoolean, D> {
  const parse = (v: string) => BOOLEANS[v.toLowerCase()] ?? v
  return {
    env: d.env,
    flag: d.flag,
    doc: d.doc,
    default: d.default,
    schema: { type: 'boolean' } as unknown as TBoolean,
    parse,
  }
}

/** A comma list (a flag may also be repeated); empty items are dropped. */
export function list(d: Declared<string[]> & { default: string[] }): Setting<TArray<TString>, string[]> {
  const schema = { type: 'array', items: stringSchema(1) } as unknown as TArray<TString>
  return { env: d.env, flag: d.flag, doc: d.doc, default: d.default, schema, parse: commaList }
}

/** A comma list of choices. */
export function listOf<const C extends Choices>(
  of: C,
  d: Declared<C[number][]> & { default: C[number][] },
): Setting<TArray<TUnion<TLiteral<C[number]>[]>>, C[number][]> {
  const schema = { type: 'array', items: literals(of) } as unknown as TArray<TUnion<TLiteral<C[number]>[]>>
  return { env: d.env, flag: d.flag, doc: d.doc, default: d.default, schema, parse: commaList }
}

function commaList(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/** The JSON Schema keywords the kinds above write. */
export interface Rule {
  type?: string
  items?: Rule
  anyOf?: TLiteral[]
  minimum?: number
  maximum?: number
  pattern?: string
  minLength?: number
}

/** The values a setting takes, as --help and docs/configuration.md's Range column say them; '' for any text. */
export function rangeOf(setting: Setting): string {
  const rule = setting.schema as Rule
  if (rule.items) return rule.items.anyOf ? `comma list of ${choicesOf(rule.items.anyOf)}` : 'comma list'
  if (rule.anyOf) return choicesOf(rule.anyOf)
  if (rule.type === 'boolean') return 'true, false'
  if (rule.type === 'integer')
    return rule.maximum === NO_MAXIMUM ? `≥ ${rule.minimum}` : `${rule.minimum}–${rule.maximum}`
  if (rule.pattern) return rule.pattern
  return (rule.minLength ?? 0) > 1 ? `≥ ${rule.minLength} characters` : ''
}

const choicesOf = (literals: TLiteral[]) => literals.map((l) => l.const).join(', ')

/** A default as --help and the docs show it ('' when there is none: unset, or an empty list). */
export function shownDefault(setting: Setting): string {
  const value = setting.default
  if (value === undefined) return ''
  return Array.isArray(value) ? value.join(',') : String(value)
}
