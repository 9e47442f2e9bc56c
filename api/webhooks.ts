// `/v1/webhooks`: management, preview, the request list (dead letters: ?status=failed) and
// replay. Registered through createApi's extraRoutes, behind the same signing-key guard.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { SluiceError } from '../core/errors.ts'
import { isUlid } from '../core/ids.ts'
import type { WebhookInput, Webhooks } from '../control/webhooks.ts'
import { MAX_TRANSFORM_BYTES } from '../control/webhook-input.ts'
import { REQUEST_STATUSES, type RequestStatus, type WebhookRequestStore } from '../store/requests-types.ts'
import type { Preview, PreviewInput } from '../transformer/preview.ts'
import type { Replay } from '../transformer/replay.ts'
import { presentRequest, presentWebhook } from './present-webhook.ts'
import { queryInt, queryString } from './query.ts'

export interface WebhookApiDeps { webhooks: Webhooks; requests: WebhookRequestStore; replay: Replay; preview: Preview }

type Q = Record<string, unknown>
type Params = { Params: { id: string } }

// REST field → WebhookInput field.
const FIELDS: Record<string, keyof WebhookInput> = {
  name: 'name', env: 'env', transform: 'transform', allow_ips: 'allowIps', deny_ips: 'denyIps',
  allow_events: 'allowEvents', deny_events: 'denyEvents', verification: 'verification', disabled: 'disabled',
}

const invalid = (message: string) => new SluiceError('REQUEST_INVALID', message)

function objectBody(request: { body: unknown }): Q {
  const b = request.body
  if (b === undefined || b === null) return {}
  if (typeof b !== 'object' || Array.isArray(b)) throw invalid('body: must be a JSON object')
  return b as Q
}

function webhookInput(body: Q): WebhookInput {
  const input: WebhookInput = {}
  for (const [field, value] of Object.entries(body)) {
    const target = FIELDS[field]
    if (!target) throw invalid(`${field}: unknown field (allowed: ${Object.keys(FIELDS).join(', ')})`)
    input[target] = value
  }
  return input
}

function status(value: unknown, allowed: readonly RequestStatus[], field: string): RequestStatus {
  if (typeof value !== 'string' || !allowed.includes(value as RequestStatus)) throw invalid(`${field}: must be one of ${allowed.join(', ')}`)
  return value as RequestStatus
}

function previewInput(body: Q): PreviewInput {
  const { payload, raw, headers = {}, query = {}, transform, ...rest } = body
  const unknown = Object.keys(rest)[0]
  if (unknown !== undefined) throw invalid(`${unknown}: unknown field (allowed: payload, raw, headers, query, transform)`)
  if (payload !== undefined && raw !== undefined) throw invalid('payload: give either payload (JSON) or raw (the body as a string), not both')
  if (raw !== undefined && typeof raw !== 'string') throw invalid('raw: must be the request body as a string')
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers) || Object.values(headers).some((v) => typeof v !== 'string')) {
    throw invalid('headers: must be an object of header name → string')
  }
  if (typeof query !== 'object' || query === null || Array.isArray(query)) throw invalid('query: must be an object of name → string or array of strings')
  const queryArrays: Record<string, string[]> = {}
  for (const [k, v] of Object.entries(query)) {
    const values = Array.isArray(v) ? v : [v]
    if (values.some((x) => typeof x !== 'string')) throw invalid(`query.${k}: must be a string or an array of strings`)
    queryArrays[k] = values as string[]
  }
  if (transform !== undefined && transform !== null && typeof transform !== 'string') throw invalid('transform: must be the source of a transform, or null for the default')
  // Compile errors are the preview's answer (TRANSFORM_COMPILE), but the size limit is the same as on save.
  if (typeof transform === 'string' && Buffer.byteLength(transform) > MAX_TRANSFORM_BYTES) throw invalid(`transform: longer than ${MAX_TRANSFORM_BYTES} bytes`)
  const text = typeof raw === 'string' ? raw : payload === undefined ? '' : JSON.stringify(payload)
  return { text, headers: headers as Record<string, string>, query: queryArrays, ...(transform !== undefined && { transform: transform as string | null }) }
}

/** The URL senders use: as this request reached the server (X-Forwarded-Host/Proto only from a trusted proxy). */
const baseUrl = (request: FastifyRequest) => `${request.protocol}://${request.host}`

export function webhookRoutes(deps: WebhookApiDeps) {
  return async (app: FastifyInstance) => {
    app.get('/v1/webhooks', async (request) => {
      const env = queryString(request.query as Q, 'env')
      return { data: deps.webhooks.list({ env }).map((w) => presentWebhook(w, baseUrl(request))), metadata: {} }
    })
    app.post('/v1/webhooks', async (request, reply) => {
      const doc = await deps.webhooks.create(webhookInput(objectBody(request)))
      reply.code(201)
      return { data: presentWebhook(doc, baseUrl(request)) }
    })
    app.get<Params>('/v1/webhooks/:id', async (request) => ({ data: presentWebhook(deps.webhooks.mustGet(request.params.id), baseUrl(request)) }))
    app.patch<Params>('/v1/webhooks/:id', async (request) => ({
      data: presentWebhook(await deps.webhooks.update(request.params.id, webhookInput(objectBody(request))), baseUrl(request)),
    }))
    app.delete<Params>('/v1/webhooks/:id', async (request) => {
      const doc = await deps.webhooks.remove(request.params.id)
      await deps.requests.removeWebhook(doc.id)
      return { data: presentWebhook(doc, baseUrl(request)) }
    })

    app.post<Params>('/v1/webhooks/:id/preview', async (request) => {
      const webhook = deps.webhooks.mustGet(request.params.id)
      const result = await deps.preview(webhook, previewInput(objectBody(request)))
      return { data: result.kind === 'ok' ? { ok: true, events: result.events, error: null } : { ok: false, events: [], error: result.error } }
    })

    app.get<Params>('/v1/webhooks/:id/requests', async (request) => {
      const webhook = deps.webhooks.mustGet(request.params.id)
      const q = request.query as Q
      const statusText = queryString(q, 'status')
      const limit = queryInt(q, 'limit', { min: 1, max: 1000 }) ?? 50
      const cursor = queryString(q, 'cursor')
      if (cursor !== undefined && !isUlid(cursor)) throw invalid('cursor: not a cursor returned by this API')
      const page = await deps.requests.list({
        webhookId: webhook.id,
        ...(statusText !== undefined && { status: status(statusText, REQUEST_STATUSES, 'status') }),
        limit,
        cursor,
      })
      return { data: page.requests.map(presentRequest), metadata: { cursor: page.nextCursor, limit } }
    })
    app.get<{ Params: { id: string; rid: string } }>('/v1/webhooks/:id/requests/:rid', async (request) => {
      const webhook = deps.webhooks.mustGet(request.params.id)
      const record = isUlid(request.params.rid) ? await deps.requests.get(webhook.id, request.params.rid) : null
      if (!record) throw new SluiceError('NOT_FOUND', `request "${request.params.rid}" of this webhook does not exist (or is not processed yet)`)
      return { data: presentRequest(record) }
    })
    app.post<{ Params: { id: string; rid: string } }>('/v1/webhooks/:id/requests/:rid/replay', async (request, reply) => {
      const webhook = deps.webhooks.mustGet(request.params.id)
      if (!isUlid(request.params.rid)) throw new SluiceError('NOT_FOUND', `request "${request.params.rid}" does not exist`)
      const replayed = await deps.replay.one(webhook.id, request.params.rid)
      reply.code(202)
      return { data: { request_id: replayed.requestId, attempt: replayed.attempt } }
    })
    app.post<Params>('/v1/webhooks/:id/requests/replay', async (request, reply) => {
      const webhook = deps.webhooks.mustGet(request.params.id)
      const body = objectBody(request)
      const unknown = Object.keys(body).find((k) => k !== 'status')
      if (unknown !== undefined) throw invalid(`${unknown}: unknown field (allowed: status)`)
      const which = body.status === undefined ? 'failed' : status(body.status, ['failed', 'unrouted'], 'status')
      const replayed = await deps.replay.all(webhook.id, which)
      reply.code(202)
      return { data: { status: which, replayed } }
    })
  }
}
