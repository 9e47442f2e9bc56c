// Distributed mode: event schemas as JSON Schema subjects of the schema registry the pipeline already
// uses (Confluent's API; Apicurio's /apis/ccompat/v7 in the tests), one subject per environment and
// name, with BACKWARD compatibility set on the subject. The registry runs its own JSON Schema
// checker, so a version it takes is the version Sluice stores (control/schemas.ts).
import { SluiceError } from '../core/errors.ts'
import { registryEndpoint } from '../bus/schema-registry.ts'

export interface EventSchemaRegistry {
  /** Registers `schema` as the subject's next version, or answers the refusal of its compatibility rule. */
  register(env: string, name: string, schema: object): Promise<RegistryOutcome>
}

export type RegistryOutcome =
  | { ok: true; version: number }
  | { ok: false; code: 'SCHEMA_BREAKING_CHANGE' | 'SCHEMA_INVALID'; message: string }

const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json'
const TIMEOUT_MS = 10_000

/** `<prefix>.schema.<env>.<name>`, every character outside [A-Za-z0-9._-] as `_xx` (hex): no `/` in a path. */
export function subjectOf(prefix: string, env: string, name: string): string {
  const escaped = [...Buffer.from(name, 'utf8')]
    .map((byte) => {
      const c = String.fromCharCode(byte)
      return /[A-Za-z0-9.-]/.test(c) ? c : `_${byte.toString(16).padStart(2, '0')}`
    })
    .join('')
  return `${prefix}.schema.${env}.${escaped}`
}

export function eventSchemaRegistry(config: {
  url: string
  auth?: { username: string; password: string }
  subjectPrefix: string
}): EventSchemaRegistry {
  const endpoint = registryEndpoint(new URL(config.url), config.auth)
  const base = endpoint.base
  const headers = { ...endpoint.headers, 'content-type': CONTENT_TYPE }

  async function call(method: 'PUT' | 'POST', path: string, body: unknown): Promise<{ status: number; body: any }> {
    let response: Response
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      })
    } catch (err) {
      throw new SluiceError('SCHEMA_REGISTRY_UNAVAILABLE', `schema registry: cannot reach ${base}`, { cause: err })
    }
    const text = await response.text()
    let parsedBody: any = text
    try {
      parsedBody = JSON.parse(text)
    } catch {
      // a proxy's page: kept as text
    }
    if (response.status >= 500 || response.status === 401 || response.status === 403)
      throw new SluiceError('SCHEMA_REGISTRY_UNAVAILABLE', `schema registry at ${base} answered ${response.status}`)
    return { status: response.status, body: parsedBody }
  }

  return {
    async register(env, name, schema) {
      const subject = encodeURIComponent(subjectOf(config.subjectPrefix, env, name))
      const body = { schemaType: 'JSON', schema: JSON.stringify(schema) }
      // Set on every push (idempotent): a subject the registry's global default would check less strictly.
      await call('PUT', `/config/${subject}`, { compatibility: 'BACKWARD' })
      const registered = await call('POST', `/subjects/${subject}/versions`, body)
      if (registered.status === 409 || registered.status === 422) {
        const message = String(registered.body?.message ?? registered.body).replace(/^.*Incompatible artifact: /, '')
        return { ok: false, code: 'SCHEMA_BREAKING_CHANGE', message }
      }
      if (registered.status >= 300) {
        const message = String(registered.body?.message ?? `answered ${registered.status}`)
        return { ok: false, code: 'SCHEMA_INVALID', message }
      }
      // The version the subject gave this schema (the same schema again keeps its version).
      const found = await call('POST', `/subjects/${subject}`, body)
      if (typeof found.body?.version !== 'number')
        throw new SluiceError('SCHEMA_REGISTRY_UNAVAILABLE', `schema registry: no version for ${subject}`)
      return { ok: true, version: found.body.version }
    },
  }
}
