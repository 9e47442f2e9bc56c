// Pausing a webhook (ARCHITECTURE.md, "Pausing"): ingest goes on answering 200 and capturing onto
// `raw`; the transformer moves a held webhook's requests aside into the request store (status
// `held`), so its partition keeps flowing. A resume sends a marker down `raw` behind the webhook's
// requests: where the transformer meets it, it releases the held requests, oldest first.
import type { Output } from '../bus/output.ts'
import { SluiceError } from '../core/errors.ts'
import type { RawWebhookRequest } from '../core/raw-request.ts'
import type { WebhookDoc, WebhookPauseDoc } from '../control/types.ts'
import type { Webhooks } from '../control/webhooks.ts'
import type { WebhookRequestStore } from '../store/requests-types.ts'

type PauseState = Pick<Webhooks, 'pauseOf' | 'releaseOf'>

/**
 * Whether the transformer holds a webhook's next request: paused, or resumed but that resume's
 * marker not passed yet (`afterRelease`: this batch released at a marker, so nothing older waits).
 */
export function isHolding(webhooks: PauseState, webhookId: string, afterRelease = false): boolean {
  const pause = webhooks.pauseOf(webhookId)
  if (!pause) return false
  if (pause.paused) return true
  return !afterRelease && (webhooks.releaseOf(webhookId)?.seq ?? 0) < pause.seq
}

/**
 * The record a resume sends down `raw`: keyed by the webhook like its requests, so it lands behind
 * them. `attempt` carries the resume's `seq`, which the transformer waits to see in its control docs.
 */
export function resumeMarker(pause: WebhookPauseDoc): RawWebhookRequest {
  return {
    requestId: `resume-${pause.seq}`,
    webhookId: pause.id,
    attempt: pause.seq,
    receivedAt: pause.resumedAt ?? Date.now(),
    ip: '',
    headers: {},
    query: {},
    body: '',
    bodyEncoding: 'utf8',
    resumeMarker: true,
  }
}

export interface PauseView {
  paused: boolean
  pausedAt: number | null
  held: number
}

export interface PausingDeps {
  webhooks: Pick<Webhooks, 'mustGet' | 'pauseOf' | 'setPause' | 'releaseOf'>
  requests: Pick<WebhookRequestStore, 'count'>
  outputs: { raw: Output<RawWebhookRequest> }
}

export function createPausing(deps: PausingDeps) {
  return {
    /** Idempotent: pausing a paused webhook changes nothing. */
    async pause(id: string): Promise<WebhookPauseDoc> {
      deps.webhooks.mustGet(id)
      const current = deps.webhooks.pauseOf(id)
      if (current?.paused) return current
      const doc = { id, paused: true, pausedAt: Date.now(), seq: (current?.seq ?? 0) + 1 }
      await deps.webhooks.setPause(doc)
      return doc
    },
    /**
     * The document first, then the marker: a marker is only acted on once its `seq` is seen. A
     * resume whose marker has not been passed yet sends it again (its publish may have failed);
     * one of a webhook that holds nothing is refused.
     */
    async resume(id: string): Promise<WebhookPauseDoc> {
      deps.webhooks.mustGet(id)
      const current = deps.webhooks.pauseOf(id)
      const released = deps.webhooks.releaseOf(id)?.seq ?? 0
      if (!current || (!current.paused && released >= current.seq))
        throw new SluiceError('WEBHOOK_NOT_PAUSED', `webhook "${id}" is not paused`)
      let doc = current
      if (current.paused) {
        doc = { ...current, paused: false, resumedAt: Date.now(), seq: current.seq + 1 }
        await deps.webhooks.setPause(doc)
      }
      await deps.outputs.raw.publish([resumeMarker(doc)])
      return doc
    },
    /** Whether it is paused, and the requests waiting for a resume (the store is not asked for one never paused). */
    async state(doc: WebhookDoc): Promise<PauseView> {
      const pause = deps.webhooks.pauseOf(doc.id)
      if (!pause) return { paused: false, pausedAt: null, held: 0 }
      const held = await deps.requests.count(doc.id, 'held')
      return { paused: pause.paused, pausedAt: pause.paused ? pause.pausedAt : null, held }
    },
  }
}

export type Pausing = ReturnType<typeof createPausing>
