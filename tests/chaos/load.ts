// Load for the chaos runs, on loopback: Event API requests (single events and batches, with and
// without caller ids) and webhook requests, from a few concurrent senders, until stopped. A
// failed Event API request is retried with the same x-service-event-id-seed, as the client
// library does, so a retry of an event without an id can never store it twice. Only a 200's IDs
// count as acknowledged; everything else is tallied by outcome.
import type { Random } from './random.ts'

export type RequestKind = 'single-id' | 'single' | 'batch-id' | 'batch' | 'webhook'
const KINDS: readonly RequestKind[] = ['single-id', 'single', 'batch-id', 'batch', 'webhook']

export interface AcknowledgedEvent {
  name: string
  callerId: string | null
  kind: RequestKind
}

export interface LoadTally {
  /** internal ID → the event a 200 acknowledged. */
  events: Map<string, AcknowledgedEvent>
  /** request ID → the `ref` of a webhook request a 200 acknowledged. */
  webhookRequests: Map<string, string>
  requests: Record<RequestKind, number>
  /** Final outcome per request (after retries): HTTP status, or `network` for no answer. */
  outcomes: Record<string, number>
  retries: number
  /** 503 answers (retried or not), and those of them without a Retry-After header. */
  unavailable: number
  unavailableWithoutRetryAfter: number
}

export interface LoadTarget {
  ingestUrl(): string
  eventKey: string
  webhookId: string
}
export interface LoadOptions {
  senders: number
  pauseMs: number
  maxBatch: number
  attempts: number
  requestTimeoutMs: number
}

export function startLoad(target: LoadTarget, random: Random, options: LoadOptions): { stop(): Promise<LoadTally> } {
  const tally: LoadTally = {
    events: new Map(),
    webhookRequests: new Map(),
    requests: { 'single-id': 0, single: 0, 'batch-id': 0, batch: 0, webhook: 0 },
    outcomes: {},
    retries: 0,
    unavailable: 0,
    unavailableWithoutRetryAfter: 0,
  }
  let stopping = false
  let sequence = 0
  const acknowledgedIds: string[] = []

  function callerId(): string {
    // One in ten reuses an acknowledged id: dedup must store it as a duplicate and run nothing.
    if (acknowledgedIds.length > 0 && random.next() < 0.1) return random.pick(acknowledgedIds)
    return `c-${random.seed}-${sequence++}`
  }

  function eventsFor(kind: RequestKind): Array<{ name: string; data: object; id?: string }> {
    const n = sequence++
    if (kind === 'single-id') return [{ name: 'chaos/order', data: { n, flaky: random.next() < 0.1 }, id: callerId() }]
    if (kind === 'single') return [{ name: 'chaos/order', data: { n, flaky: random.next() < 0.1 } }]
    const size = random.int(2, options.maxBatch)
    return Array.from({ length: size }, (_, i) => ({
      name: 'chaos/bulk',
      data: { n, i },
      ...(kind === 'batch-id' && { id: callerId() }),
    }))
  }

  async function post(
    path: string,
    body: string,
    headers: Record<string, string>,
  ): Promise<{ status: number | 'network'; body?: any }> {
    try {
      const response = await fetch(`${target.ingestUrl()}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
        signal: AbortSignal.timeout(options.requestTimeoutMs),
      })
      const text = await response.text()
      if (response.status === 503) {
        tally.unavailable++
        if (!response.headers.has('retry-after')) tally.unavailableWithoutRetryAfter++
      }
      return { status: response.status, body: response.status === 200 ? JSON.parse(text) : undefined }
    } catch {
      return { status: 'network' }
    }
  }

  async function sendEvents(kind: RequestKind): Promise<void> {
    const events = eventsFor(kind)
    const body = JSON.stringify(events.length === 1 && !kind.startsWith('batch') ? events[0] : events)
    const seed = `${Date.now()},${random.bytes(10).toString('base64')}`
    for (let attempt = 1; ; attempt++) {
      const answer = await post(`/e/${target.eventKey}`, body, { 'x-service-event-id-seed': seed })
      const retriable = answer.status === 'network' || answer.status === 503
      if (!retriable || attempt >= options.attempts || stopping) {
        tally.outcomes[answer.status] = (tally.outcomes[answer.status] ?? 0) + 1
        if (answer.status === 200) {
          answer.body.ids.forEach((id: string, i: number) =>
            tally.events.set(id, { name: events[i].name, callerId: events[i].id ?? null, kind }),
          )
          for (const event of events) if (event.id !== undefined) acknowledgedIds.push(event.id)
        }
        return
      }
      tally.retries++
      await new Promise((r) => setTimeout(r, 100 * 2 ** attempt))
    }
  }

  async function sendWebhook(): Promise<void> {
    // A webhook sender's retry is a new delivery (a new request ID), so none is retried here.
    const ref = `w-${random.seed}-${sequence++}`
    const answer = await post(`/e/${target.webhookId}`, JSON.stringify({ kind: 'paid', ref }), {})
    tally.outcomes[answer.status] = (tally.outcomes[answer.status] ?? 0) + 1
    if (answer.status === 200) tally.webhookRequests.set(answer.body.request_id, ref)
  }

  const senders = Array.from({ length: options.senders }, async () => {
    while (!stopping) {
      const kind = random.pick(KINDS)
      tally.requests[kind]++
      await (kind === 'webhook' ? sendWebhook() : sendEvents(kind))
      await new Promise((r) => setTimeout(r, random.int(0, options.pauseMs * 2)))
    }
  })

  return {
    async stop() {
      stopping = true
      await Promise.all(senders)
      return tally
    },
  }
}
