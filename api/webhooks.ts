// `/v1/webhooks`: management, pause and resume, preview, the request list (dead letters:
// ?status=failed) and replay. Registered through createApi's extraRoutes, behind the same signing-key guard.
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { WebhookVerification } from '../control/types.ts'
import type { WebhookInput, Webhooks } from '../control/webhooks.ts'
import type { WebhookDoc } from '../control/types.ts'
import { SluiceError } from '../core/errors.ts'
import { isUlid } from '../core/ids.ts'
import type { WebhookRequestStore } from '../store/requests-types.ts'
import type { Preview, PreviewInput } from '../transformer/preview.ts'
import type { Replay } from '../transformer/replay.ts'
import type { Pausing } from '../transformer/pause.ts'
import { presentRequest, presentWebhook } from './present-webhook.ts'
import { pageCursor } from './query.ts'
import { EnvQuery, errors, IdParams, List, One, Page } from './schemas.ts'
import { absentBodyIsEmpty } from './validation.ts'
import {
  CreateWebhook,
  PatchWebhook,
  PreviewBody,
  PreviewResult,
  Replayed,
  ReplayAllBody,
  ReplayedAll,
  RequestParams,
  RequestsQuery,
  Webhook,
  WebhookRequest,
} from './webhook-schemas.ts'

export interface WebhookApiDeps {
  webhooks: Webhooks
  requests: WebhookRequestStore
  replay: Replay
  preview: Preview
  pausing: Pausing
}

type Params = { Params: { id: string } }
type Body<T extends { static: unknown }> = { Body: T['static'] }

function webhookInput(body: Static<typeof PatchWebhook>): WebhookInput {
  return {
    name: body.name,
    env: body.env,
    transform: body.transform,
    allowIps: body.allow_ips,
    denyIps: body.deny_ips,
    allowEvents: body.allow_events,
    denyEvents: body.deny_events,
    verification: body.verification && verificationInput(body.verification),
    deliveryId: body.delivery_id,
    disabled: body.disabled,
  }
}

type VerificationBody = NonNullable<Static<typeof PatchWebhook>['verification']>

function verificationInput(v: VerificationBody): WebhookVerification {
  return {
    preset: v.preset,
    secret: v.secret,
    previousSecret: v.previous_secret,
    header: v.header,
    publicUrl: v.public_url,
    toleranceSeconds: v.tolerance_seconds,
  }
}

function previewInput(body: Static<typeof PreviewBody>): PreviewInput {
  const { payload, raw, headers = {}, query = {}, transform } = body
  if (payload !== undefined && raw !== undefined) {
    throw new SluiceError(
      'REQUEST_INVALID',
      'body.payload: give either payload (JSON) or raw (the body as a string), not both',
    )
  }
  const queryArrays = Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]))
  const text = raw ?? (payload === undefined ? '' : JSON.stringify(payload))
  return { text, headers, query: queryArrays, ...(transform !== undefined && { transform }) }
}

/** The URL senders use: as this request reached the server (X-Forwarded-Host/Proto only from a trusted proxy). */
const baseUrl = (request: FastifyRequest) => `${request.protocol}://${request.host}`

const WebhookParams = IdParams('Webhook ID (wh_…)')
const tags = ['Webhooks']

export function webhookRoutes(deps: WebhookApiDeps) {
  const present = async (doc: WebhookDoc, request: FastifyRequest) =>
    presentWebhook(doc, baseUrl(request), await deps.pausing.state(doc))
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: Static<typeof EnvQuery> }>(
      '/v1/webhooks',
      {
        schema: {
          permission: 'webhooks:read',
          tags,
          summary: 'Webhooks',
          querystring: EnvQuery,
          response: { 200: List(Webhook), ...errors(400, 401) },
        },
      },
      async (request) => {
        const env = request.query.env || undefined
        const docs = deps.webhooks.list({ env })
        return { data: await Promise.all(docs.map((w) => present(w, request))), metadata: {} }
      },
    )
    app.post<Body<typeof CreateWebhook>>(
      '/v1/webhooks',
      {
        schema: {
          permission: 'webhooks:write',
          tags,
          summary: 'Create a webhook (its URL is POST /e/<id>)',
          body: CreateWebhook,
          response: { 201: One(Webhook), ...errors(400, 401, 404) },
        },
      },
      async (request, reply) => {
        const doc = await deps.webhooks.create(webhookInput(request.body))
        reply.code(201)
        return { data: presentWebhook(doc, baseUrl(request)) }
      },
    )
    app.get<Params>(
      '/v1/webhooks/:id',
      {
        schema: {
          permission: 'webhooks:read',
          tags,
          summary: 'One webhook',
          params: WebhookParams,
          response: { 200: One(Webhook), ...errors(401, 404) },
        },
      },
      async (request) => ({ data: await present(deps.webhooks.mustGet(request.params.id), request) }),
    )
    app.patch<Params & Body<typeof PatchWebhook>>(
      '/v1/webhooks/:id',
      {
        preValidation: absentBodyIsEmpty,
        schema: {
          permission: 'webhooks:write',
          tags,
          summary: 'Change name, transform, lists, verification, disabled (null removes transform or verification)',
          params: WebhookParams,
          body: PatchWebhook,
          response: { 200: One(Webhook), ...errors(400, 401, 404) },
        },
      },
      async (request) => {
        const doc = await deps.webhooks.update(request.params.id, webhookInput(request.body))
        return { data: await present(doc, request) }
      },
    )
    app.post<Params>(
      '/v1/webhooks/:id/pause',
      {
        schema: {
          permission: 'webhooks:write',
          tags,
          summary: 'Pause a webhook: its requests are still answered 200 and captured, then held until resumed',
          params: WebhookParams,
          response: { 200: One(Webhook), ...errors(401, 404) },
        },
      },
      async (request) => {
        await deps.pausing.pause(request.params.id)
        return { data: await present(deps.webhooks.mustGet(request.params.id), request) }
      },
    )
    app.post<Params>(
      '/v1/webhooks/:id/resume',
      {
        schema: {
          permission: 'webhooks:write',
          tags,
          summary: 'Resume a paused webhook: what it held is transformed and delivered, in the order it arrived',
          params: WebhookParams,
          response: { 200: One(Webhook), ...errors(401, 404, 409) },
        },
      },
      async (request) => {
        await deps.pausing.resume(request.params.id)
        return { data: await present(deps.webhooks.mustGet(request.params.id), request) }
      },
    )
    app.delete<Params>(
      '/v1/webhooks/:id',
      {
        schema: {
          permission: 'webhooks:write',
          tags,
          summary: 'Delete a webhook and its requests',
          params: WebhookParams,
          response: { 200: One(Webhook), ...errors(401, 404) },
        },
      },
      async (request) => {
        const doc = await deps.webhooks.remove(request.params.id)
        await deps.requests.removeWebhook(doc.id)
        return { data: presentWebhook(doc, baseUrl(request)) }
      },
    )

    app.post<Params & Body<typeof PreviewBody>>(
      '/v1/webhooks/:id/preview',
      {
        preValidation: absentBodyIsEmpty,
        schema: {
          permission: 'webhooks:read',
          tags,
          summary: 'Run a transform on a sample request without storing anything',
          params: WebhookParams,
          body: PreviewBody,
          response: { 200: One(PreviewResult), ...errors(400, 401, 404) },
        },
      },
      async (request) => {
        const webhook = deps.webhooks.mustGet(request.params.id)
        const result = await deps.preview(webhook, previewInput(request.body))
        const data =
          result.kind === 'ok'
            ? { ok: true, events: result.events, error: null }
            : { ok: false, events: [], error: { ...result.error, ...result.position } }
        return { data }
      },
    )

    app.get<Params & { Querystring: Static<typeof RequestsQuery> }>(
      '/v1/webhooks/:id/requests',
      {
        schema: {
          permission: 'webhooks:read',
          tags,
          summary: 'Requests of a webhook, newest first (status=failed: the dead-letter list)',
          params: WebhookParams,
          querystring: RequestsQuery,
          response: { 200: Page(WebhookRequest), ...errors(400, 401, 404) },
        },
      },
      async (request) => {
        const webhook = deps.webhooks.mustGet(request.params.id)
        const { status, cursor } = request.query
        const limit = request.query.limit ?? 50
        const page = await deps.requests.list({ webhookId: webhook.id, status, limit, cursor: pageCursor(cursor) })
        return { data: page.requests.map(presentRequest), metadata: { cursor: page.nextCursor, limit } }
      },
    )
    app.get<{ Params: Static<typeof RequestParams> }>(
      '/v1/webhooks/:id/requests/:rid',
      {
        schema: {
          permission: 'webhooks:read',
          tags,
          summary: 'One request with its raw body and outcome',
          params: RequestParams,
          response: { 200: One(WebhookRequest), ...errors(401, 404) },
        },
      },
      async (request) => {
        const webhook = deps.webhooks.mustGet(request.params.id)
        const { rid } = request.params
        const record = isUlid(rid) ? await deps.requests.get(webhook.id, rid) : null
        if (!record) {
          throw new SluiceError(
            'NOT_FOUND',
            `request "${rid}" of this webhook does not exist (or is not processed yet)`,
          )
        }
        return { data: presentRequest(record) }
      },
    )
    app.post<{ Params: Static<typeof RequestParams> }>(
      '/v1/webhooks/:id/requests/:rid/replay',
      {
        schema: {
          permission: 'webhooks:write',
          tags,
          summary: 'Replay one request through the current transform',
          params: RequestParams,
          response: { 202: One(Replayed), ...errors(401, 404) },
        },
      },
      async (request, reply) => {
        const webhook = deps.webhooks.mustGet(request.params.id)
        if (!isUlid(request.params.rid))
          throw new SluiceError('NOT_FOUND', `request "${request.params.rid}" does not exist`)
        const replayed = await deps.replay.one(webhook.id, request.params.rid)
        reply.code(202)
        return { data: { request_id: replayed.requestId, attempt: replayed.attempt } }
      },
    )
    app.post<Params & Body<typeof ReplayAllBody>>(
      '/v1/webhooks/:id/requests/replay',
      {
        preValidation: absentBodyIsEmpty,
        schema: {
          permission: 'webhooks:write',
          tags,
          summary: 'Replay every failed (or unrouted) request',
          params: WebhookParams,
          body: ReplayAllBody,
          response: { 202: One(ReplayedAll), ...errors(400, 401, 404) },
        },
      },
      async (request, reply) => {
        const webhook = deps.webhooks.mustGet(request.params.id)
        const which = request.body.status ?? 'failed'
        const replayed = await deps.replay.all(webhook.id, which)
        reply.code(202)
        return { data: { status: which, replayed } }
      },
    )
  }
}
