import { newIdSeed } from '../core/ids.ts'
import { withRetry, type RetryPolicy } from '../core/retry.ts'
import { SluiceRequestError } from './errors.ts'
import type { EventData } from './events.ts'

/** An event to send; for a name of Events (client/events.ts) its data must have that name's type. */
export type SendEvent<N extends string = string> = N extends string
  ? {
      name: N
      data: EventData<N>
      id?: string
      ts?: number
    }
  : never

/** What send and step.sendEvent take: `& { name: N }` lets TypeScript infer each name as its literal. */
export type SendEvents<N extends string> = (SendEvent<N> & { name: N }) | Array<SendEvent<N> & { name: N }>
export interface SendOptions {
  baseUrl: string
  eventKey?: string
  env?: string
  retry: RetryPolicy
  fetch?: typeof fetch
}

/**
 * Sends events with retries on network errors, 5xx and 429. Every attempt carries the same
 * ID seed, so the server assigns the same internal IDs and dedup drops any repeat.
 */
export async function sendEvents(events: SendEvent | SendEvent[], options: SendOptions): Promise<{ ids: string[] }> {
  const seed = newIdSeed()
  const url = `${options.baseUrl.replace(/\/$/, '')}/e/${encodeURIComponent(options.eventKey ?? 'dev')}`
  const doFetch = options.fetch ?? fetch
  return withRetry(
    async () => {
      const response = await doFetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-event-id-seed': seed,
          ...(options.env && { 'x-service-env': options.env }),
        },
        body: JSON.stringify(events),
      })
      const body = (await response.json().catch(() => ({}))) as { ids?: string[]; code?: string; error?: string }
      if (response.ok && Array.isArray(body.ids)) return { ids: body.ids }
      const retryAfter = Number(response.headers.get('retry-after') ?? NaN) // seconds; the HTTP-date form is not sent by Sluice
      throw new SluiceRequestError(
        response.status,
        body.code ?? 'UNKNOWN',
        body.error ?? `HTTP ${response.status}`,
        Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined,
      )
    },
    {
      policy: options.retry,
      retryAfterMs: (err) => (err instanceof SluiceRequestError ? err.retryAfterMs : undefined),
      shouldRetry: (err) => !(err instanceof SluiceRequestError) || err.status >= 500 || err.status === 429,
    },
  )
}
