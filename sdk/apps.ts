// The apps served with Inngest's SDKs: synced by URL (Sluice's signed PUT, answered in band, or the
// app's own POST to /fn/register), stored as `app` documents, their functions in the registry with
// runtime http so that runners call them (sdk/executor.ts). Only a synced URL is ever called.
import type { Logger } from 'pino'
import type { ControlStore, AppDoc } from '../control/types.ts'
import type { FunctionRegistry } from '../control/functions.ts'
import type { Envs } from '../control/envs.ts'
import { SluiceError } from '../core/errors.ts'
import { PRODUCTION } from '../core/env-names.ts'
import { parseRegistration, type AppRegistration } from './register.ts'
import { call } from './http-call.ts'
import { signature, verifySignature, bearerHoldsKey } from './signature.ts'
import { SDK_HEADERS } from './headers.ts'

export interface AppsConfig {
  devMode: boolean
  signingKey?: string
  /** Hosts apps may be served from (`host` or `host:port`); empty: any. */
  allowedHosts: string[]
  connectTimeoutMs: number
  syncTimeoutMs: number
  maxResponseBytes: number
}

export const appDocId = (env: string, appId: string) => `${env}/${appId}`

export function createApps(
  deps: { control: ControlStore; registry: FunctionRegistry; envs: Envs; log: Logger },
  config: AppsConfig,
) {
  const { control, registry, log } = deps
  /** URLs whose PUT is in flight: their out-of-band registration answers that sync. */
  const pending = new Map<string, { env: string; url: string; registered?: AppDoc }>()

  function pendingLike(url: string) {
    const key = (u: string) => {
      const parsed = new URL(u)
      return `${parsed.origin}${parsed.pathname.replace(/\/$/, '')}`
    }
    for (const [synced, waiting] of pending) if (key(synced) === key(url)) return waiting
    return undefined
  }

  function checkHost(url: string): void {
    if (config.allowedHosts.length === 0) return
    const u = new URL(url)
    if (!config.allowedHosts.includes(u.host) && !config.allowedHosts.includes(u.hostname))
      throw new SluiceError('SDK_HOST_REFUSED', `url: ${u.host} is not in SLUICE_APP_HOSTS`)
  }

  async function save(registration: AppRegistration, env: string, syncKind: AppDoc['syncKind']): Promise<AppDoc> {
    checkHost(registration.url)
    if (env !== PRODUCTION && !deps.envs.get(env))
      throw new SluiceError('ENV_NOT_FOUND', `env: no environment "${env}"`)
    await registry.sync(registration.functions, { kind: 'app', env, appId: registration.appId })
    const doc: AppDoc = {
      id: appDocId(env, registration.appId),
      env,
      appId: registration.appId,
      url: registration.url,
      sdk: registration.sdk,
      ...(registration.framework && { framework: registration.framework }),
      functions: registration.functions.map((f) => f.key),
      syncKind,
      syncedAt: Date.now(),
    }
    await control.put('app', doc.id, doc)
    log.info({ app: doc.appId, env, functions: doc.functions.length, sdk: doc.sdk }, 'app synced')
    return doc
  }

  async function recordFailure(url: string, env: string, err: SluiceError): Promise<void> {
    const doc = control.list('app').find((a) => a.env === env && a.url === url)
    if (doc)
      await control.put('app', doc.id, { ...doc, error: { code: err.code, message: err.message, at: Date.now() } })
  }

  return {
    list: (env?: string) => control.list('app').filter((a) => env === undefined || a.env === env),
    get: (id: string) => control.get('app', id),

    /** Sluice's signed PUT to the app (SDK_SPEC.md 4.3); the app answers with its registration or posts it. */
    async sync(url: string, env = PRODUCTION): Promise<AppDoc> {
      if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
        throw new SluiceError('REQUEST_INVALID', 'url: must be an absolute http(s) URL')
      checkHost(url)
      const body = JSON.stringify({ url })
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        [SDK_HEADERS.syncKind]: 'in_band',
        [SDK_HEADERS.serverKind]: config.devMode ? 'dev' : 'cloud',
      }
      if (config.signingKey) headers[SDK_HEADERS.signature] = signature(body, config.signingKey, Date.now())
      const waiting = { env, url } as { env: string; url: string; registered?: AppDoc }
      pending.set(url, waiting)
      try {
        const answer = await call('PUT', new URL(url), headers, body, {
          connectTimeoutMs: config.connectTimeoutMs,
          responseTimeoutMs: config.syncTimeoutMs,
          maxResponseBytes: config.maxResponseBytes,
        })
        const failed = (message: string) => new SluiceError('SDK_SYNC_FAILED', `${url}: ${message}`)
        if (!answer.ok) throw failed(answer.message)
        if (waiting.registered) return waiting.registered
        // Never the answer itself: an app's error page may echo what it was sent.
        if (answer.status === 401)
          throw failed("the app refused the signature (401): does it hold this server's signing key?")
        if (answer.status !== 200) throw failed(`the app answered HTTP ${answer.status}`)
        if (String(answer.headers[SDK_HEADERS.syncKind] ?? '').replace('-', '_') !== 'in_band')
          throw failed(
            'the app answered but did not register: set its INNGEST_DEV (dev) or INNGEST_API_BASE_URL to this server',
          )
        if (
          config.signingKey &&
          !verifySignature(
            String(answer.headers[SDK_HEADERS.signature] ?? ''),
            answer.body,
            config.signingKey,
            Date.now(),
          )
        )
          throw failed("the app's answer is not signed with the signing key: is its INNGEST_SIGNING_KEY this server's?")
        let json: unknown
        try {
          json = JSON.parse(answer.body)
        } catch {
          throw failed('the answer is not JSON')
        }
        const registration = parseRegistration(json, env, String(answer.headers[SDK_HEADERS.sdk] ?? ''))
        // The app's URL is the one Sluice synced, whatever the app believes its URL is behind a proxy.
        return await save({ ...registration, url }, env, 'in_band')
      } catch (err) {
        if (err instanceof SluiceError) await recordFailure(url, env, err).catch(() => {})
        throw err
      } finally {
        pending.delete(url)
      }
    },

    /** The app's own POST to /fn/register (out of band): its `Authorization` must hold the signing key. */
    async register(body: unknown, headers: { authorization?: string; sdk?: string; env?: string }): Promise<AppDoc> {
      if (!config.devMode && !(config.signingKey && bearerHoldsKey(headers.authorization, config.signingKey)))
        throw new SluiceError(
          'UNAUTHORIZED',
          'authorization: expected "Bearer <hashed signing key>", as the SDKs send it',
        )
      const url = (body as { url?: unknown } | null)?.url
      const cleanUrl = typeof url === 'string' && URL.canParse(url) ? withoutDeployId(url) : undefined
      // The app may name itself otherwise than Sluice called it (a query, a trailing slash): the sync
      // in flight to the same origin and path is the one it answers.
      const waiting = cleanUrl ? (pending.get(cleanUrl) ?? pendingLike(cleanUrl)) : undefined
      const env = headers.env || waiting?.env || PRODUCTION
      const registration = parseRegistration(
        cleanUrl ? { ...(body as object), url: waiting?.url ?? cleanUrl } : body,
        env,
        headers.sdk,
      )
      const doc = await save(registration, env, 'out_of_band')
      if (waiting) waiting.registered = doc
      return doc
    },

    async remove(id: string): Promise<AppDoc> {
      const doc = control.get('app', id)
      if (!doc) throw new SluiceError('NOT_FOUND', `no app "${id}"`)
      await registry.sync([], { kind: 'app', env: doc.env, appId: doc.appId })
      await control.delete('app', id)
      log.info({ app: doc.appId, env: doc.env }, 'app removed')
      return doc
    },
  }
}

export type Apps = ReturnType<typeof createApps>

function withoutDeployId(url: string): string {
  const u = new URL(url)
  u.searchParams.delete('deployId')
  return u.toString()
}
