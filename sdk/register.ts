// What an app tells Sluice when it syncs (SDK_SPEC.md 4.3): its ID, URL, SDK, framework and its
// functions' configuration, either posted to /fn/register (out of band) or answered to Sluice's
// signed PUT (in band). Each function's options are Inngest's own shapes, which are Sluice's
// (client/flow.ts), so they are checked by the same code as a function defined in JavaScript.
import { defineFunction, type CancelOn, type FunctionTrigger } from '../client/function.ts'
import type { FlowOptions } from '../client/flow.ts'
import { SluiceError } from '../core/errors.ts'
import { parseDuration } from '../core/duration.ts'
import type { FunctionRegistration } from '../control/functions.ts'

/** Inngest's default for a function that names no retries (inngest/inngest pkg/consts DefaultRetryCount). */
const INNGEST_DEFAULT_RETRIES = 4

export interface AppRegistration {
  appId: string
  url: string
  sdk: { language: string; version: string }
  framework?: string
  functions: FunctionRegistration[]
}

/** npm inngest 3.22.0 to 3.53.1 can expose the signing key (fixed in 3.54.0): refused at sync. */
const LEAKING_JS = { from: [3, 22, 0], to: [3, 53, 1] }

type Json = Record<string, unknown>

/** A field by any of its spellings, keys compared case-insensitively and without underscores. */
function field(o: Json, ...names: string[]): unknown {
  const wanted = new Set(names.map((n) => n.toLowerCase().replaceAll('_', '')))
  for (const [k, v] of Object.entries(o)) if (wanted.has(k.toLowerCase().replaceAll('_', ''))) return v
  return undefined
}

const invalid = (message: string): never => {
  throw new SluiceError('SDK_SYNC_INVALID', message)
}

export function parseRegistration(body: unknown, env: string, sdkHeader?: string): AppRegistration {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return invalid('the sync body must be an object')
  const o = body as Json
  const appId = field(o, 'appName', 'app_id', 'appname')
  if (typeof appId !== 'string' || appId === '') return invalid('appName: must be a non-empty string')
  const url = field(o, 'url')
  if (typeof url !== 'string' || !URL.canParse(url)) return invalid('url: must be an absolute URL')
  const sdk = sdkOf(o, sdkHeader)
  refuseLeakingSdk(sdk)
  const framework = field(o, 'framework')
  const functions = field(o, 'functions') ?? []
  if (!Array.isArray(functions)) return invalid('functions: must be an array')
  const seen = new Set<string>()
  const registrations = functions.map((f, i) => {
    const registration = functionOf(f, i, appId, url, env)
    if (seen.has(registration.key)) invalid(`functions[${i}].id: "${registration.key}" is there twice`)
    seen.add(registration.key)
    return registration
  })
  return {
    appId,
    url,
    sdk,
    ...(typeof framework === 'string' && framework !== '' && { framework }),
    functions: registrations,
  }
}

/** `js:v3.54.2` (out of band), `sdk_language` + `sdk_version` (in band), or the `X-Inngest-SDK` header. */
function sdkOf(o: Json, header: string | undefined): { language: string; version: string } {
  const language = field(o, 'sdk_language')
  const version = field(o, 'sdk_version')
  if (typeof language === 'string' && language !== '' && typeof version === 'string' && version !== '')
    return { language, version: version.replace(/^v/, '') }
  for (const given of [field(o, 'sdk'), header]) {
    const m = typeof given === 'string' ? /^(?:inngest-)?([\w./-]+):v?(.+)$/.exec(given) : null
    if (m) return { language: m[1], version: m[2] }
  }
  return { language: 'unknown', version: 'unknown' }
}

function refuseLeakingSdk(sdk: { language: string; version: string }): void {
  if (sdk.language !== 'js') return
  const v = sdk.version.split(/[.-]/).slice(0, 3).map(Number)
  if (v.some((n) => !Number.isInteger(n))) return
  const cmp = (a: number[], b: number[]) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]
  if (cmp(v, LEAKING_JS.from) >= 0 && cmp(v, LEAKING_JS.to) <= 0)
    throw new SluiceError(
      'SDK_VERSION_REFUSED',
      `npm inngest ${sdk.version} is refused: versions 3.22.0 to 3.53.1 can expose the signing key; upgrade to 3.54.2 or later`,
    )
}

function functionOf(given: unknown, i: number, appId: string, appUrl: string, env: string): FunctionRegistration {
  const where = `functions[${i}]`
  if (typeof given !== 'object' || given === null) return invalid(`${where}: must be an object`)
  const f = given as Json
  const id = field(f, 'id')
  if (typeof id !== 'string' || id === '') return invalid(`${where}.id: must be a non-empty string`)
  // The SDKs send the composite ID `<app id>-<function id>`.
  const slug = id.startsWith(`${appId}-`) ? id.slice(appId.length + 1) : id
  const step = (field(f, 'steps') as Json | undefined)?.step as Json | undefined
  const attempts = (step?.retries as Json | undefined)?.attempts
  const timeouts = field(f, 'timeouts') as Json | undefined
  const options = {
    id: slug,
    ...(typeof field(f, 'name') === 'string' && { name: field(f, 'name') as string }),
    // Named attempts, but every SDK sends its `retries` option there (JS, Python and Go alike); an
    // SDK sends none when the code named none, and Inngest then retries 4 times: so does Sluice.
    retries: attempts !== undefined ? Number(attempts) : INNGEST_DEFAULT_RETRIES,
    ...(timeouts?.finish !== undefined && { timeoutMs: durationMs(timeouts.finish, `${where}.timeouts.finish`) }),
    cancelOn: cancelOf(field(f, 'cancel'), where),
    ...flowOf(f),
  }
  try {
    const fn = defineFunction({ id: appId, env }, options, triggersOf(field(f, 'triggers'), where), () => undefined)
    return {
      env: fn.env,
      key: fn.key,
      appId,
      functionId: fn.id,
      name: fn.name,
      triggers: fn.triggers,
      ...(fn.cancelOn.length > 0 && { cancelOn: fn.cancelOn }),
      ...(fn.flow && { flow: fn.flow }),
      retries: fn.retries,
      timeoutMs: fn.timeoutMs,
      runtime: { kind: 'http', url: appUrl },
    }
  } catch (err) {
    if (err instanceof SluiceError) throw err
    // "createFunction({ throttle.limit }): …" names the option; the sync names the function too.
    return invalid(`${where} ("${id}"): ${(err as Error).message.replace(/^createFunction\(/, '(')}`)
  }
}

function triggersOf(given: unknown, where: string): FunctionTrigger[] {
  if (!Array.isArray(given)) return invalid(`${where}.triggers: must be an array`)
  return given.map((t: Json, j) => {
    if (typeof t?.cron === 'string') return { cron: t.cron }
    if (typeof t?.event !== 'string') return invalid(`${where}.triggers[${j}]: an event or a cron`)
    const event = internalName(t.event)
    return typeof t.expression === 'string' && t.expression !== '' ? { event, if: t.expression } : { event }
  })
}

/** The internal events an Inngest app listens to, by Sluice's names (sdk/events.ts renames them back). */
function internalName(name: string): string {
  return name.startsWith('inngest/') ? `sluice/${name.slice('inngest/'.length)}` : name
}

function cancelOf(given: unknown, where: string): CancelOn[] {
  if (given === undefined || given === null) return []
  if (!Array.isArray(given)) return invalid(`${where}.cancel: must be an array`)
  return given.map((c: Json) => ({
    event: c?.event as string,
    ...(typeof c?.if === 'string' && { if: c.if }),
    ...(c?.timeout !== undefined && { timeout: c.timeout as string }),
  }))
}

/** Inngest's flow options as Sluice takes them: `count` was throttle's old name for `limit`; no account scope. */
function flowOf(f: Json): FlowOptions {
  const flow: Record<string, unknown> = {}
  for (const name of ['concurrency', 'throttle', 'rateLimit', 'debounce', 'batchEvents', 'priority', 'singleton']) {
    const value = withoutNulls(field(f, name))
    if (value !== undefined && value !== null) flow[name] = value
  }
  // Go sends what it has no value for as null, and a burst of 0 for the default.
  if ((flow.throttle as Json | undefined)?.burst === 0) delete (flow.throttle as Json).burst
  if (flow.priority !== undefined && (flow.priority as Json).run === undefined) delete flow.priority
  const singleton = flow.singleton as Json | undefined
  if (typeof singleton?.mode === 'string') singleton.mode = singleton.mode.toLowerCase()
  const idempotency = field(f, 'idempotency')
  if (typeof idempotency === 'string' && idempotency !== '') flow.idempotency = idempotency
  const throttle = flow.throttle as Json | undefined
  if (throttle && throttle.limit === undefined && throttle.count !== undefined) {
    const { count, ...rest } = throttle
    flow.throttle = { ...rest, limit: count }
  }
  // Go sends `{fn: [...], step: [...]}`: run-level and step-level limits, both Sluice's concurrency.
  const concurrency = flow.concurrency as Json | Json[] | number | undefined
  if (concurrency && typeof concurrency === 'object' && !Array.isArray(concurrency))
    flow.concurrency = [...((concurrency.fn as Json[]) ?? []), ...((concurrency.step as Json[]) ?? [])]
  if (Array.isArray(flow.concurrency)) flow.concurrency = flow.concurrency.map(concurrencyOf)
  // Python sends `concurrency: []` and Go `0` for none.
  if (flow.concurrency === 0 || (Array.isArray(flow.concurrency) && flow.concurrency.length === 0))
    delete flow.concurrency
  return flow as FlowOptions
}

function withoutNulls(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== ''))
}

/** One limit as Sluice takes it: no hash; Inngest's scopes by name or number, account taken as env. */
function concurrencyOf(c: Json): Json {
  if (typeof c !== 'object' || c === null) return c
  const { hash: _, scope, key, ...rest } = c
  // Go's enums marshal as "Fn", "Env", "Account".
  const named = typeof scope === 'number' ? ['fn', 'env', 'account'][scope] : String(scope ?? '').toLowerCase()
  return {
    ...rest,
    ...(typeof key === 'string' && key !== '' && { key }),
    ...(named !== undefined && named !== '' && { scope: named === 'account' ? 'env' : named }),
  }
}

function durationMs(value: unknown, where: string): number {
  const parsed = parseDuration(value)
  return parsed.ok ? parsed.value : invalid(`${where}: ${parsed.message}`)
}
