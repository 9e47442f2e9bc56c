// Replay: the stored raw request goes back onto `raw` as the next attempt of the same
// request, and the stage records the new outcome over the old one.
import type { Output } from '../bus/output.ts'
import { SluiceError } from '../core/errors.ts'
import type { RawWebhookRequest } from '../core/raw-request.ts'
import type { RequestStatus, WebhookRequestStore } from '../store/requests-types.ts'

export interface ReplayDeps {
  requests: WebhookRequestStore
  outputs: { raw: Output<RawWebhookRequest> }
}

const PAGE = 500

export function createReplay(deps: ReplayDeps) {
  const nextAttempt = (request: RawWebhookRequest): RawWebhookRequest => ({ ...request, attempt: request.attempt + 1 })
  return {
    async one(webhookId: string, requestId: string): Promise<RawWebhookRequest> {
      const record = await deps.requests.get(webhookId, requestId)
      if (!record)
        throw new SluiceError(
          'NOT_FOUND',
          `request "${requestId}" of this webhook does not exist (or is not processed yet)`,
        )
      const replayed = nextAttempt(record.request)
      await deps.outputs.raw.publish([replayed])
      return replayed
    },
    /**
     * Every request with the status, newest first, a page at a time. The cursor walks down by
     * request ID, so a replayed request that fails again (and is re-indexed above the cursor)
     * is not picked up twice by the same call.
     */
    async all(webhookId: string, status: RequestStatus): Promise<number> {
      let cursor: string | undefined
      let count = 0
      do {
        const page = await deps.requests.list({ webhookId, status, limit: PAGE, cursor })
        await deps.outputs.raw.publish(page.requests.map((r) => nextAttempt(r.request)))
        count += page.requests.length
        cursor = page.nextCursor ?? undefined
      } while (cursor !== undefined)
      return count
    },
  }
}

export type Replay = ReturnType<typeof createReplay>
