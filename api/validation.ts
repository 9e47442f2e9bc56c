// Request validation against the routes' declared schemas (api/schemas.ts), and its errors in
// the catalogue's shape: `400 REQUEST_INVALID` "body.name: must be string".
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import type { FastifySchemaCompiler, FastifyRequest } from 'fastify'
import { SluiceError } from '../core/errors.ts'

// Two validators because the parts differ: a query string or path holds only text, so
// "limit=10" is coerced to the integer the schema declares; a JSON body is taken as typed
// ("max_body_bytes": "2048" is an error, not a number). Unknown body fields are refused,
// not silently dropped (fastify's default removes them), so a misspelt field is reported.
// `verbose` gives each error its schema, whose description explains a pattern better than the regex.
const common = { allErrors: false, removeAdditional: false, useDefaults: true, strict: true, verbose: true } as const
const strictAjv = new Ajv({ ...common, coerceTypes: false })
const textAjv = new Ajv({ ...common, coerceTypes: 'array' })

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  httpPart === 'body' ? strictAjv.compile(schema) : finiteOnly(textAjv.compile(schema))

/**
 * Ajv coerces query text such as "1e400" or "Infinity" to Infinity, which then passes `integer` and
 * `maximum` (found by the fuzz suite: `?limit=1e400` was a 500 when the page was serialized). A
 * query or path value must be a finite number.
 */
function finiteOnly(validate: ValidateFunction) {
  const checked = (data: unknown): boolean => {
    if (!validate(data)) {
      checked.errors = validate.errors
      return false
    }
    const bad = Object.entries((data ?? {}) as Record<string, unknown>).find(
      ([, v]) => typeof v === 'number' && !Number.isFinite(v),
    )
    checked.errors = bad
      ? [{ instancePath: `/${bad[0]}`, keyword: 'type', params: { type: 'a finite number' }, schemaPath: '' }]
      : null
    return bad === undefined
  }
  checked.errors = null as ErrorObject[] | null | undefined
  return checked
}

const PART: Record<string, string> = { body: 'body', querystring: 'query', params: 'params', headers: 'headers' }

/** fastify's validation error (`err.validation`) → `REQUEST_INVALID` naming the field. */
export function validationError(errors: ErrorObject[], context: string | undefined): SluiceError {
  // A union (nullable fields, enums declared as literals) fails once per branch and then as
  // `anyOf`: the deepest failures say the most, and their allowed values or types read best.
  const deepest = errors.reduce((a, e) => (e.instancePath.length > a.instancePath.length ? e : a))
  const here = errors.filter((e) => e.instancePath === deepest.instancePath && e.keyword !== 'anyOf')
  const part = PART[context ?? ''] ?? context ?? 'request'
  const segments = deepest.instancePath.split('/').slice(1).map(unescapePointer)
  const path = [part, ...segments].join('.').replace(/\.(\d+)(?=\.|$)/g, '[$1]')
  const consts = here
    .filter((e) => e.keyword === 'const')
    .map((e) => (e.params as { allowedValue: unknown }).allowedValue)
  const types = here.filter((e) => e.keyword === 'type').map((e) => (e.params as { type: string }).type)
  if (consts.length > 1 || (consts.length === 1 && types.length === 0))
    return invalid(`${path}: must be one of ${consts.join(', ')}`)
  if (types.length > 0 && types.length === here.length) return invalid(`${path}: must be ${types.join(' or ')}`)
  const first = here[0] ?? deepest
  const p = first.params as Record<string, unknown>
  switch (first.keyword) {
    case 'additionalProperties':
      return invalid(`${path}.${p.additionalProperty}: unknown field`)
    case 'required':
      return invalid(`${path}.${p.missingProperty}: required`)
    case 'pattern': {
      const description = (first.parentSchema as { description?: string } | undefined)?.description
      return invalid(`${path}: ${description ? `must be ${description}` : first.message}`)
    }
    case 'enum':
      return invalid(`${path}: must be one of ${(p.allowedValues as unknown[]).join(', ')}`)
    default:
      return invalid(`${path}: ${first.message}`)
  }
}

const invalid = (message: string) => new SluiceError('REQUEST_INVALID', message)
const unescapePointer = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~')

/**
 * A route whose body is optional (every field has a default) takes an absent body as `{}`;
 * the validator would otherwise refuse `undefined`.
 */
export async function absentBodyIsEmpty(request: FastifyRequest): Promise<void> {
  request.body ??= {}
}
