// The webhook side of `/e/<id>`: check the webhook's state and IP rules, capture the raw
// request onto `raw`, and answer once it is durable. Nothing here parses or transforms the
// body, so a broken transform can lose nothing and a slow one never holds the sender up.
import type { FastifyReply } from 'fastify'
import type { Output } from '../bus/output.ts'
import { SluiceError } from '../core/errors.ts'
import { newUlid } from '../core/ids.ts'
import { encodeRawBody, type RawWebhookRequest } from '../core/raw-request.ts'
import type { Envs } from '../control/envs.ts'
import { isWebhookId, type Webhooks } from '../control/webhooks.ts'
import { normalizeIp } from '../control/webhook-lists.ts'
import { canonicalHeaders, queryArrays } from '../core/canonical.ts'
import type { KeyRequest, WebhookAdmission, WebhookIngest } from './index.ts'
import { BRANCH_GROUP } from '../core/env-names.ts'

export interface WebhookIngestDeps {
  webhooks: Webhooks
  envs: Envs
  outputs: { raw: Output<RawWebhookRequest> }
}
export interface WebhookIngestConfig {
  maxBodyBytes: number
}

export function createWebhookIngest(deps: WebhookIngestDeps, config: WebhookIngestConfig): WebhookIngest {
  return {
    owns: isWebhookId,
    admit(request: KeyRequest): WebhookAdmission {
      const webhook = deps.webhooks.get(request.params.key ?? '')
      if (!webhook) throw new SluiceError('NOT_FOUND', 'webhook: no such webhook (it was deleted, or the URL is wrong)')
      if (webhook.disabled) throw new SluiceError('WEBHOOK_DISABLED', `webhook "${webhook.name}" is disabled`)
      // request.ip is the socket's address unless config.trustProxy names the peer as a proxy,
      // so a spoofed X-Forwarded-For from anyone else is ignored.
      const ip = normalizeIp(request.ip)
      if (!deps.webhooks.ipRules(webhook).allows(ip))
        throw new SluiceError('IP_DENIED', `source IP ${ip}: not allowed for this webhook`)
      const envLimit = webhook.env === BRANCH_GROUP ? undefined : deps.envs.get(webhook.env)?.maxBodyBytes
      const maxBodyBytes = envLimit ?? config.maxBodyBytes
      return { webhook, ip, maxBodyBytes }
    },
    async handle(request: KeyRequest, reply: FastifyReply, body: Buffer, { webhook, ip }: WebhookAdmission) {
      const receivedAt = Date.now()
      const raw: RawWebhookRequest = {
        requestId: newUlid(receivedAt),
        webhookId: webhook.id,
        attempt: 1,
        receivedAt,
        ip,
        headers: canonicalHeaders(request.headers),
        query: queryArrays(request.query as Record<string, unknown>),
        ...encodeRawBody(body),
      }
      await deps.outputs.raw.publish([raw])
      reply.code(200)
      return { status: 200, request_id: raw.requestId }
    },
  }
}
