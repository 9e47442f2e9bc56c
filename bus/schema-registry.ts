// The two calls the Avro codecs make to a Confluent-compatible schema registry (Confluent's,
// Confluent Cloud, Apicurio's /apis/ccompat/v7, Karapace), over plain fetch:
//   POST <url>/subjects/<subject>/versions  {schemaType, schema}  → {id}
//   GET  <url>/schemas/ids/<id>                                 → {schema}
// A refusal becomes a SluiceError that names the setting to fix, the subject and the registry's
// own status and message; the password is never in it.
import { SluiceError } from '../core/errors.ts'

export interface SchemaRegistryConfig {
  /** The API's base URL: `https://psrc-….confluent.cloud`, `http://apicurio:8080/apis/ccompat/v7`. */
  url: string
  /** HTTP basic auth (Confluent Cloud: API key and secret). */
  auth?: { username: string; password: string }
}

/** What the codecs need from a registry (bus/avro.ts). */
export interface SchemaRegistry {
  /** The schema's global id; the same schema under several subjects, or registered again, keeps its id. */
  register(subject: string, schema: string): Promise<number>
  /** The schema text registered under `id`. */
  schemaById(id: number): Promise<string>
}

const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json'
const TIMEOUT_MS = 10_000
const URL_SETTING = 'schemaRegistryUrl (--schema-registry-url / SLUICE_SCHEMA_REGISTRY_URL)'
const AUTH_SETTING =
  'schemaRegistryUser / schemaRegistryPassword (SLUICE_SCHEMA_REGISTRY_USER / SLUICE_SCHEMA_REGISTRY_PASSWORD)'

/**
 * The registry's base URL without credentials, and the headers of every call: fetch refuses a URL with
 * credentials in it, so they become the basic auth, unless given apart.
 */
export function registryEndpoint(url: URL, given?: SchemaRegistryConfig['auth']) {
  const parsed = new URL(url)
  const auth =
    given ??
    (parsed.username
      ? { username: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) }
      : undefined)
  parsed.username = ''
  parsed.password = ''
  const base = parsed.toString().replace(/\/+$/, '')
  const headers: Record<string, string> = { accept: CONTENT_TYPE }
  if (auth) headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`
  return { base, headers }
}

export function schemaRegistryClient(config: SchemaRegistryConfig): SchemaRegistry {
  const parsed = URL.parse(config.url)
  // Not echoed: it may hold a password.
  if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:')
    throw new SluiceError('CONFIG_INVALID', `${URL_SETTING}: not an http:// or https:// URL`)
  const { base, headers } = registryEndpoint(parsed, config.auth)

  async function call<T>(
    method: 'GET' | 'POST',
    path: string,
    what: string,
    body?: unknown,
    subject?: string,
  ): Promise<T> {
    let response: Response
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': CONTENT_TYPE },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      })
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause
      const reason = cause?.code ?? cause?.message ?? (err as Error).message
      const message = `${URL_SETTING}: ${what}: cannot reach ${base} (${reason})`
      throw new SluiceError('SCHEMA_REGISTRY_UNAVAILABLE', message, { cause: err })
    }
    const text = await response.text()
    if (response.ok) return JSON.parse(text) as T
    throw refusal(response.status, registryMessage(text), what, subject)
  }

  function refusal(status: number, message: string, what: string, subject?: string): SluiceError {
    const answered = `the schema registry at ${base} answered ${status}${message && `: ${message}`}`
    if (status === 401 || status === 403) return new SluiceError('CREDENTIALS_REJECTED', `${AUTH_SETTING}: ${answered}`)
    if (status === 409 && subject !== undefined) {
      // Confluent, Apicurio and Karapace all answer an incompatible schema with 409.
      const hint =
        "another writer's schema under this subject (give Sluice its own SLUICE_TOPIC_PREFIX), or a compatibility " +
        `level stricter than BACKWARD (GET ${base}/config/${encodeURIComponent(subject)}); see docs/avro.md`
      return new SluiceError('SCHEMA_INCOMPATIBLE', `${what}: ${answered}. Likely ${hint}`)
    }
    if (status >= 500) return new SluiceError('SCHEMA_REGISTRY_UNAVAILABLE', `${URL_SETTING}: ${what}: ${answered}`)
    const hint = status === 404 ? ' (is it the base URL of the Confluent-compatible API?)' : ''
    return new SluiceError('CONFIG_INVALID', `${URL_SETTING}: ${what}: ${answered}${hint}`)
  }

  return {
    async register(subject, schema) {
      const what = `registering the schema of subject "${subject}"`
      const path = `/subjects/${encodeURIComponent(subject)}/versions`
      return (await call<{ id: number }>('POST', path, what, { schemaType: 'AVRO', schema }, subject)).id
    },
    async schemaById(id) {
      return (await call<{ schema: string }>('GET', `/schemas/ids/${id}`, `fetching schema id ${id}`)).schema
    },
  }
}

/** The registry's `{error_code, message}` body, or its text when it is not that (a proxy's page). */
function registryMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown }
    if (typeof body.message === 'string') return body.message
  } catch {
    // not JSON
  }
  return text.slice(0, 200).trim()
}
