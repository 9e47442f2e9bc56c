// The kinds of setting (integer, text, choice, switch, list): each turns one declaration into the schema
// that checks it, the parse of its variable or flag, and the range --help and docs/configuration.md show.
import {
  type TArray,
  type TBoolean,
  type TInteger,
  type TLiteral,
  type TSchema,
  type TString,
  type TUnion,
  Type,
} from '@sinclair/typebox'

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
  const schema = Type.Integer({ minimum: d.min, maximum: d.max ?? NO_MAXIMUM })
  return { env: d.env, flag: d.flag, doc: d.doc, default: d.default as D, schema, parse: Number }
}

export function text<D extends string | undefined = undefined>(
  d: Declared<D> & { minLength?: number; pattern?: string; secret?: boolean },
): Setting<TString, D> {
  const schema = Type.String({ minLength: d.minLength ?? 1, ...(d.pattern && { pattern: d.pattern }) })
  return { env: d.env, flag: d.flag, doc: d.doc, default: d.default as D, schema, secret: d.secret, parse: String }
}

type Choices = readonly [string, ...string[]]
const literals = <C extends Choices>(of: C) => Type.Union(of.map((v) => Type.Literal(v as C[number])))

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
  return { env: d.env, flag: d.flag, doc: d.doc, default: d.default, schema: Type.Boolean(), parse }
}

/** A comma list (a flag may also be repeated); empty items are dropped. */
export function list(d: Declared<string[]> & { default: string[] }): Setting<TArray<TString>, string[]> {
  const schema = Type.Array(Type.String({ minLength: 1 }))
  return { env: d.env, flag: d.flag, doc: d.doc, default: d.default, schema, parse: commaList }
}

/** A comma list of choices. */
export function listOf<const C extends Choices>(
  of: C,
  d: Declared<C[number][]> & { default: C[number][] },
): Setting<TArray<TUnion<TLiteral<C[number]>[]>>, C[number][]> {
  const schema = Type.Array(literals(of))
  return { env: d.env, flag: d.flag, doc: d.doc, default: d.default, schema, parse: commaList }
}

function commaList(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/** The JSON Schema keywords the kinds above write. */
interface Rule {
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
