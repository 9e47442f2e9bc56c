// JSON Schema (draft 2020-12) for an event's `data`, compiled once per version. Strict: an unknown
// keyword or format is refused rather than ignored (a typo would otherwise check nothing), and only
// local `$ref`s (`#…`) resolve: the server never fetches a schema over the network.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'

/** The outcome of compiling a schema: a validator, or the fault with the JSON pointer it is at. */
export type Compiled = { ok: true; validate: ValidateFunction } | { ok: false; pointer: string; message: string }

export const MAX_SCHEMA_BYTES = 64 * 1024

// Formats checked by pattern (ajv ships none of its own); any other `format` is refused by strict mode.
export const FORMATS = {
  'date-time': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)$/i,
  date: /^\d{4}-\d\d-\d\d$/,
  time: /^\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?$/i,
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  uri: /^[a-z][a-z0-9+.-]*:[^\s]*$/i,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  ipv4: /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$/,
}

// A new instance per schema: versions of one name may share an `$id`, which one instance refuses twice.
function newAjv(): Ajv2020 {
  return new Ajv2020({
    strictSchema: true,
    strictNumbers: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allErrors: false,
    formats: FORMATS,
  })
}

export function compileSchema(schema: unknown): Compiled {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return { ok: false, pointer: '', message: 'must be a JSON Schema object' }
  const remote = remoteRef(schema, '')
  if (remote) return { ok: false, pointer: remote, message: 'only local $refs (starting with #) are allowed' }
  const ajv = newAjv()
  if (!ajv.validateSchema(schema)) {
    const [first] = ajv.errors ?? []
    return { ok: false, pointer: first?.instancePath ?? '', message: first?.message ?? 'not a valid JSON Schema' }
  }
  try {
    return { ok: true, validate: ajv.compile(schema) }
  } catch (err) {
    const message = (err as Error).message
    return { ok: false, pointer: faultPointer(schema, message), message }
  }
}

/** An ajv error as `<pointer in data>: <rule>`, e.g. `/amount: must be number`. */
export function violationText(error: ErrorObject): string {
  const params = error.params as { missingProperty?: string; additionalProperty?: string }
  const extra = params.additionalProperty ?? params.missingProperty
  const pointer = extra === undefined ? error.instancePath : `${error.instancePath}/${escapePointer(extra)}`
  if (error.keyword === 'required') return `${pointer}: is required`
  return `${pointer}: ${error.message ?? error.keyword}`
}

export const escapePointer = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1')

/** The pointer of the first `$ref`/`$dynamicRef` that is not local, or undefined. */
function remoteRef(node: unknown, pointer: string): string | undefined {
  if (typeof node !== 'object' || node === null) return undefined
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const found = remoteRef(node[i], `${pointer}/${i}`)
      if (found !== undefined) return found
    }
    return undefined
  }
  for (const [key, value] of Object.entries(node)) {
    const here = `${pointer}/${escapePointer(key)}`
    if ((key === '$ref' || key === '$dynamicRef') && !(typeof value === 'string' && value.startsWith('#'))) return here
    const found = remoteRef(value, here)
    if (found !== undefined) return found
  }
  return undefined
}

/** ajv names a refused keyword or format in its message, not where it is: find its first place. */
function faultPointer(schema: object, message: string): string {
  const quoted = /"([^"]+)"/.exec(message)?.[1]
  if (quoted === undefined) return ''
  const isFormat = message.includes('format')
  const stack: Array<[unknown, string]> = [[schema, '']]
  while (stack.length > 0) {
    const [node, pointer] = stack.shift()!
    if (typeof node !== 'object' || node === null) continue
    for (const [key, value] of Object.entries(node)) {
      const here = `${pointer}/${escapePointer(key)}`
      if (!isFormat && key === quoted) return here
      if (isFormat && key === 'format' && value === quoted) return here
      stack.push([value, here])
    }
  }
  return ''
}
