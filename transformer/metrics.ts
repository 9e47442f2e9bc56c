// Metrics of the transformer stage (docs/operations.md, "Metrics"): what became of each webhook
// request, and how long transforms ran. Never labelled by webhook (its ID is a secret).
import { errorCatalogue } from '../core/errors.ts'
import { counter, histogram, LATENCY_BUCKETS } from '../core/metrics.ts'

export const webhookRequests = counter<'outcome' | 'code'>({
  name: 'sluice_webhook_requests_total',
  help: 'Webhook requests the transformer finished, by outcome (delivered, unrouted, filtered, failed, dropped, slow, held) and error code',
  labelNames: ['outcome', 'code'],
})

export const transformDuration = histogram<'lane'>({
  name: 'sluice_transform_duration_seconds',
  help: 'Time one webhook request spent in its transform (parse, sandbox, output checks), by lane (shared, slow)',
  labelNames: ['lane'],
  buckets: LATENCY_BUCKETS,
})

/** A request's outcome as the transformer decided it (its Delivery union, by kind). */
export type Finished =
  | { kind: 'ok' | 'unrouted' | 'drop' | 'slow' | 'held' }
  | { kind: 'deadLetter'; error: { code: string } }

const OUTCOME = { ok: 'delivered', unrouted: 'unrouted', drop: 'dropped', slow: 'slow', held: 'held' } as const

/** Counts a batch's outcomes once they are recorded. A dead letter of the name rules is `filtered`. */
export function countWebhookRequests(finished: Finished[]): void {
  for (const f of finished) {
    if (f.kind !== 'deadLetter') webhookRequests.inc({ outcome: OUTCOME[f.kind], code: '' })
    else {
      const code = f.error.code in errorCatalogue ? f.error.code : 'other'
      webhookRequests.inc({ outcome: code === 'EVENT_NAME_DENIED' ? 'filtered' : 'failed', code })
    }
  }
}
