// REST: apps served with Inngest's SDKs (sdk/apps.ts). `POST /v1/apps {url, env?}` syncs one by
// Sluice's signed PUT; `GET /v1/apps`, `DELETE /v1/apps/<app id>?env=`. `POST /fn/register`, at the
// server's root as the SDKs expect it, takes an app's own registration (its Bearer: the hashed key).
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { AppDoc } from '../control/types.ts'
import { appDocId, type Apps } from '../sdk/apps.ts'
import { PRODUCTION } from '../core/env-names.ts'
import { SDK_HEADERS } from '../sdk/headers.ts'
import { errors, List, Nullable, One, Time } from './schemas.ts'

const App = Type.Object({
  id: Type.String({ description: "The app's ID (the SDK client's id)" }),
  env: Type.String(),
  url: Type.String({ description: 'Where the app serves its functions; the only URL Sluice calls for them' }),
  sdk: Type.Object({ language: Type.String(), version: Type.String() }),
  framework: Nullable(Type.String()),
  functions: Type.Array(Type.String(), { description: "The app's functions: <app id>-<function id>" }),
  sync_kind: Nullable(Type.String({ description: 'in_band (answered to the PUT) or out_of_band (/fn/register)' })),
  synced_at: Time('Last successful sync'),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String(), at: Time('When') })),
})
const SyncBody = Type.Object(
  {
    url: Type.String({ description: "The app's serve() URL, e.g. http://app:3000/api/inngest" }),
    env: Type.Optional(Type.String({ description: 'The environment its functions serve (default production)' })),
  },
  { additionalProperties: false, examples: [{ url: 'http://127.0.0.1:3000/api/inngest' }] },
)
const AppParams = Type.Object({ id: Type.String({ description: "The app's ID" }) })
const EnvQuery = Type.Object({ env: Type.Optional(Type.String({ description: 'Default production' })) })

export function presentApp(a: AppDoc) {
  return {
    id: a.appId,
    env: a.env,
    url: a.url,
    sdk: a.sdk,
    framework: a.framework ?? null,
    functions: a.functions,
    sync_kind: a.syncKind ?? null,
    synced_at: new Date(a.syncedAt).toISOString(),
    error: a.error ? { ...a.error, at: new Date(a.error.at).toISOString() } : null,
  }
}

/** Behind the REST API's guard (api/index.ts). */
export function appsRoutes(deps: { apps: Apps }) {
  return async (app: FastifyInstance) => {
    const tags = ['Apps']
    app.get<{ Querystring: { env?: string } }>(
      '/v1/apps',
      {
        schema: {
          permission: 'apps:read',
          tags,
          summary: 'Apps served with the Inngest SDKs',
          querystring: Type.Object({ env: Type.Optional(Type.String()) }),
          response: { 200: List(App), ...errors(401) },
        },
      },
      async (request) => ({ data: deps.apps.list(request.query.env || undefined).map(presentApp), metadata: {} }),
    )
    app.post<{ Body: Static<typeof SyncBody> }>(
      '/v1/apps',
      {
        schema: {
          permission: 'apps:write',
          tags,
          summary: 'Sync an app (again): Sluice calls its URL, signed, and registers its functions',
          body: SyncBody,
          response: { 200: One(App), ...errors(400, 401, 404, 502) },
        },
      },
      async (request) => ({ data: presentApp(await deps.apps.sync(request.body.url, request.body.env)) }),
    )
    app.delete<{ Params: Static<typeof AppParams>; Querystring: Static<typeof EnvQuery> }>(
      '/v1/apps/:id',
      {
        schema: {
          permission: 'apps:write',
          tags,
          summary: 'Remove an app and its functions (runs in flight fail when they next call it)',
          params: AppParams,
          querystring: EnvQuery,
          response: { 200: One(App), ...errors(401, 404) },
        },
      },
      async (request) => ({
        data: presentApp(await deps.apps.remove(appDocId(request.query.env || PRODUCTION, request.params.id))),
      }),
    )
  }
}

/** At the root, outside the REST API's guard: the registration proves the signing key itself. */
export function registerRoute(deps: { apps: Apps }) {
  return async (app: FastifyInstance) => {
    app.post(
      '/fn/register',
      { schema: { tags: ['Apps'], summary: "An app's own registration (Inngest SDKs, out of band)", hide: true } },
      async (request) => {
        const header = (name: string) => {
          const value = request.headers[name]
          return typeof value === 'string' ? value : undefined
        }
        const doc = await deps.apps.register(request.body, {
          authorization: header('authorization'),
          sdk: header(SDK_HEADERS.sdk),
          env: header('x-inngest-env'),
        })
        return { ok: true, modified: true, app: doc.appId }
      },
    )
  }
}
