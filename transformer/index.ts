// The transformer stage: consumes captured webhook requests from `raw`, verifies signatures,
// runs transforms in the sandbox, and publishes the resulting events onto `incoming` keyed
// by env + dedup id, exactly like the Event API's. Every request's outcome is recorded in
// the request store; failures become dead letters there, never lost. See ARCHITECTURE.md.
import { createHash } from 'node:crypto'
import type { Logger } from 'pino'
import type { Bus } from '../bus/types.ts'
import { createConsumerStage } from '../bus/consumer-stage.ts'
import type { Codec } from '../bus/codec.ts'
import type { Output } from '../bus/output.ts'
import { toEventRecords, type EventInput, type EventLimits, type EventRecord } from '../core/event.ts'
import { seededUlids } from '../core/ids.ts'
import { headerOf, rawBodyText, type RawWebhookRequest } from '../core/raw-request.ts'
import type { Envs } from '../control/envs.ts'
import { BRANCH_GROUP, type WebhookDoc } from '../control/types.ts'
import type { Webhooks } from '../control/webhooks.ts'
import type { RequestError, WebhookRequestRecord, WebhookRequestStore } from '../store/requests-types.ts'
import type { Sandbox } from './sandbox-types.ts'
import { runPipeline } from './pipeline.ts'
import { verifySignature } from './verify.ts'

export interface TransformerDeps {
  bus: Bus
  codec: Codec<RawWebhookRequest>
  webhooks: Pick<Webhooks, 'get' | 'nameRules'>
  envs: Pick<Envs, 'get'>
  sandbox: Sandbox
  requests: WebhookRequestStore
  outputs: { incoming: Output<EventRecord> }
  log: Logger
}

export interface TransformerConfig extends EventLimits { inputTopic: string; group: string; maxBatchRecords: number }

type Delivery =
  | { kind: 'ok'; env: string; events: EventRecord[] }
  | { kind: 'unrouted'; events: EventInput[] }
  | { kind: 'deadLetter'; error: RequestError }
  | { kind: 'drop'; reason: string }

export function createTransformer(deps: TransformerDeps, config: TransformerConfig) {

  /** A branch-group webhook's environment comes from the request; none or unknown → unrouted. */
  function routeEnv(webhook: WebhookDoc, raw: RawWebhookRequest): string | undefined {
    if (webhook.env !== BRANCH_GROUP) return webhook.env
    const name = headerOf(raw.headers, 'x-service-env') ?? raw.query['x-service-env']?.[0]
    const env = name ? deps.envs.get(name) : undefined
    return env && env.kind === 'branch' && env.archivedAt === undefined ? env.name : undefined
  }

  async function deliver(raw: RawWebhookRequest): Promise<Delivery> {
    const webhook = deps.webhooks.get(raw.webhookId)
    if (!webhook) return { kind: 'drop', reason: 'the webhook was deleted' }
    if (webhook.verification) {
      const verified = verifySignature(webhook.verification, raw)
      if (!verified.ok) return { kind: 'deadLetter', error: { code: 'SIGNATURE_INVALID', message: verified.reason } }
    }
    const result = await runPipeline(deps, webhook, { text: rawBodyText(raw), headers: raw.headers, query: raw.query }, config)
    switch (result.kind) {
      case 'deadLetter':
        return result
      case 'ok': {
        const env = routeEnv(webhook, raw)
        if (env === undefined) return { kind: 'unrouted', events: result.events }
        return { kind: 'ok', env, events: toRecords(raw, env, result.events) }
      }
      default: {
        const never: never = result
        throw new Error(`unexpected pipeline result ${JSON.stringify(never)}`)
      }
    }
  }

  async function handle(requests: RawWebhookRequest[]): Promise<void> {
    // Transforms of one batch run side by side (the sandbox has a pool of isolates); results
    // are published in request order, in one write.
    const deliveries = await Promise.all(requests.map(deliver))
    const processedAt = Date.now()
    const events: EventRecord[] = []
    const records: WebhookRequestRecord[] = []
    deliveries.forEach((delivery, i) => {
      const request = requests[i]
      const base = { request, processedAt, env: null, eventIds: [], events: [], error: null }
      switch (delivery.kind) {
        case 'ok':
          events.push(...delivery.events)
          return void records.push({ ...base, status: 'delivered', env: delivery.env, eventIds: delivery.events.map((e) => e.internalId) })
        case 'unrouted':
          return void records.push({ ...base, status: 'unrouted', events: delivery.events })
        case 'deadLetter':
          deps.log.info({ webhookId: request.webhookId, requestId: request.requestId, code: delivery.error.code }, 'webhook request dead-lettered')
          return void records.push({ ...base, status: 'failed', error: delivery.error })
        case 'drop':
          return void deps.log.info({ webhookId: request.webhookId, requestId: request.requestId, reason: delivery.reason }, 'webhook request dropped')
        default: {
          const never: never = delivery
          throw new Error(`unexpected delivery ${JSON.stringify(never)}`)
        }
      }
    })
    // Events first, then outcomes: a crash in between redelivers the batch, which yields the
    // same IDs, so dedup and the idempotent store absorb the repeat.
    await deps.outputs.incoming.publish(events)
    await deps.requests.record(records)
  }

  return createConsumerStage(deps.bus, deps.codec, { group: config.group, topics: [config.inputTopic], maxBatchRecords: config.maxBatchRecords }, handle)
}

/**
 * Deterministic IDs: internal IDs from (request, attempt), so a redelivered record yields the
 * same ones; dedup keys (for events without `id`) from the request alone, so a replay of a
 * request whose events were already delivered is recorded as a duplicate, not run twice.
 */
export function toRecords(raw: RawWebhookRequest, env: string, events: EventInput[]): EventRecord[] {
  const seed = (attempt: number) => `${raw.receivedAt},${createHash('sha256').update(`${raw.requestId}:${attempt}`).digest().subarray(0, 10).toString('base64')}`
  const internalIds = seededUlids(seed(raw.attempt), events.length)
  const dedupIds = raw.attempt === 1 ? internalIds : seededUlids(seed(1), events.length)
  return toEventRecords(events, { internalIds, dedupIds, env, receivedAt: raw.receivedAt, source: { kind: 'webhook', webhookId: raw.webhookId, requestId: raw.requestId } })
}
