// Webhooks: one unguessable URL per producer, with its transform, allow/deny lists and
// optional signature check. Documents live in the ControlStore (in memory on every node),
// so ingest finds a webhook and checks its IP rules without a round trip.
import { randomBytes } from 'node:crypto'
import { SluiceError } from '../core/errors.ts'
import type { ControlStore, WebhookDoc, WebhookPauseDoc, WebhookReleaseDoc, WebhookVerification } from './types.ts'
import type { Envs } from './envs.ts'
import { ipRules, nameRules, type IpRules, type NameRules } from './webhook-lists.ts'
import {
  checkCidrs,
  checkDeliveryId,
  checkName,
  checkPatterns,
  checkTransform,
  checkVerification,
} from './webhook-input.ts'
import { BRANCH_GROUP } from '../core/env-names.ts'

export const WEBHOOK_ID_PREFIX = 'wh_'

/** The webhook side of `/e/<id>`: event keys start `sk_`, so the prefix alone decides. */
export const isWebhookId = (id: string) => id.startsWith(WEBHOOK_ID_PREFIX)

/** Settings as the REST schema admits them (api/webhook-schemas.ts); null removes an optional one. */
export interface WebhookInput {
  name?: string
  env?: string
  transform?: string | null
  allowIps?: string[] | null
  denyIps?: string[] | null
  allowEvents?: string[] | null
  denyEvents?: string[] | null
  verification?: WebhookVerification | null
  /** A header name, `none`, or null: the preset's default. */
  deliveryId?: string | null
  disabled?: boolean
}

export function createWebhooks(control: ControlStore, envs: Envs) {
  // Compiled rules per document version: a put replaces the document object, which drops its entry.
  const ipCache = new WeakMap<WebhookDoc, IpRules>()
  const nameCache = new WeakMap<WebhookDoc, NameRules>()

  function get(id: string): WebhookDoc | undefined {
    return isWebhookId(id) ? control.get('webhook', id) : undefined
  }

  function mustGet(id: string): WebhookDoc {
    const doc = get(id)
    if (!doc) throw new SluiceError('NOT_FOUND', `webhook "${id}" does not exist`)
    return doc
  }

  function checkEnv(value: string | undefined): string {
    if (value === undefined) return 'production'
    if (value === BRANCH_GROUP) return value
    const env = envs.get(value)
    if (!env) throw new SluiceError('ENV_NOT_FOUND', `env: environment "${value}" does not exist`)
    if (env.kind === 'branch')
      throw new SluiceError(
        'REQUEST_INVALID',
        `env: "${value}" is a branch environment; branch webhooks belong to the group "${BRANCH_GROUP}"`,
      )
    return value
  }

  return {
    get,
    list(filter: { env?: string } = {}): WebhookDoc[] {
      return control
        .list('webhook')
        .filter((w) => filter.env === undefined || w.env === filter.env)
        .sort((a, b) => a.createdAt - b.createdAt)
    },
    async create(input: WebhookInput): Promise<WebhookDoc> {
      const now = Date.now()
      const transform = checkTransform(input.transform)
      const verification = checkVerification(input.verification)
      const deliveryId = checkDeliveryId(input.deliveryId)
      const doc: WebhookDoc = {
        id: WEBHOOK_ID_PREFIX + randomBytes(32).toString('base64url'),
        name: checkName(input.name),
        env: checkEnv(input.env),
        ...(transform !== undefined && { transform }),
        transformVersion: 1,
        allowIps: checkCidrs('allow_ips', input.allowIps),
        denyIps: checkCidrs('deny_ips', input.denyIps),
        allowEvents: checkPatterns('allow_events', input.allowEvents),
        denyEvents: checkPatterns('deny_events', input.denyEvents),
        ...(verification && { verification }),
        ...(deliveryId !== undefined && { deliveryId }),
        disabled: input.disabled ?? false,
        createdAt: now,
        updatedAt: now,
      }
      await control.put('webhook', doc.id, doc)
      return doc
    },
    /** Only the fields present change; `transform: null` / `verification: null` remove them. */
    async update(id: string, patch: WebhookInput): Promise<WebhookDoc> {
      const doc = mustGet(id)
      if (patch.env !== undefined)
        throw new SluiceError('REQUEST_INVALID', 'env: a webhook cannot move between environments; create a new one')
      // Everything is validated before anything is written: a bad field changes nothing.
      const next: WebhookDoc = { ...doc, updatedAt: Date.now() }
      if (patch.name !== undefined) next.name = checkName(patch.name)
      if (patch.transform !== undefined) {
        const transform = checkTransform(patch.transform)
        if (transform === undefined) delete next.transform
        else next.transform = transform
        if (transform !== doc.transform) next.transformVersion = doc.transformVersion + 1
      }
      if (patch.allowIps !== undefined) next.allowIps = checkCidrs('allow_ips', patch.allowIps)
      if (patch.denyIps !== undefined) next.denyIps = checkCidrs('deny_ips', patch.denyIps)
      if (patch.allowEvents !== undefined) next.allowEvents = checkPatterns('allow_events', patch.allowEvents)
      if (patch.denyEvents !== undefined) next.denyEvents = checkPatterns('deny_events', patch.denyEvents)
      if (patch.verification !== undefined) {
        const verification = checkVerification(patch.verification)
        if (verification === undefined) delete next.verification
        else next.verification = verification
      }
      if (patch.deliveryId !== undefined) {
        const deliveryId = checkDeliveryId(patch.deliveryId)
        if (deliveryId === undefined) delete next.deliveryId
        else next.deliveryId = deliveryId
      }
      if (patch.disabled !== undefined) next.disabled = patch.disabled
      await control.put('webhook', id, next)
      return next
    },
    /** The webhook's pause, written by the api (transformer/pause.ts); absent when never paused. */
    pauseOf: (id: string): WebhookPauseDoc | undefined => control.get('webhookPause', id),
    async setPause(doc: WebhookPauseDoc): Promise<void> {
      mustGet(doc.id)
      await control.put('webhookPause', doc.id, doc)
    },
    /** How far the transformer has released, written by it alone, so neither side overwrites the other. */
    releaseOf: (id: string): WebhookReleaseDoc | undefined => control.get('webhookRelease', id),
    async setReleased(doc: WebhookReleaseDoc): Promise<void> {
      await control.put('webhookRelease', doc.id, doc)
    },
    async remove(id: string): Promise<WebhookDoc> {
      const doc = mustGet(id)
      await control.delete('webhook', id)
      if (control.get('webhookPause', id)) await control.delete('webhookPause', id)
      if (control.get('webhookRelease', id)) await control.delete('webhookRelease', id)
      return doc
    },
    mustGet,
    ipRules(doc: WebhookDoc): IpRules {
      const cached = ipCache.get(doc)
      if (cached) return cached
      const rules = ipRules(doc.allowIps, doc.denyIps)
      ipCache.set(doc, rules)
      return rules
    },
    nameRules(doc: WebhookDoc): NameRules {
      const cached = nameCache.get(doc)
      if (cached) return cached
      const rules = nameRules(doc.allowEvents, doc.denyEvents)
      nameCache.set(doc, rules)
      return rules
    },
  }
}

export type Webhooks = ReturnType<typeof createWebhooks>
