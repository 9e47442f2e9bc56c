// The transformer stage: consumes captured webhook requests from `raw`, verifies signatures,
// runs transforms in the sandbox, and publishes the resulting events onto `incoming` keyed
// by env + dedup id, exactly like the Event API's. Every request's outcome is recorded in
// the request store; failures become dead letters there, never lost. Each webhook gets a fair
// share: its own concurrency within a batch, a time budget in the shared lane (over it, its
// requests move to the slow lane, with its own topic and isolates), and a circuit breaker that
// pauses a transform which keeps hitting its limits. A paused webhook's requests are held in the
// request store and released in order at its resume's marker. See ARCHITECTURE.md.
import { createHash } from 'node:crypto'
import type { Logger } from 'pino'
import { createConsumerStage } from '../bus/consumer-stage.ts'
import type { Source } from '../bus/source.ts'
import type { Output } from '../bus/output.ts'
import { toEventRecords, type EventInput, type EventLimits, type EventRecord } from '../core/event.ts'
import { seededUlids } from '../core/ids.ts'
import { sleep } from '../core/retry.ts'
import { fingerprint } from '../core/fingerprint.ts'
import { headerOf, rawBodyText, type RawWebhookRequest } from '../core/raw-request.ts'
import type { Envs } from '../control/envs.ts'
import { withViolations, type CheckEvents } from '../control/schema-check.ts'
import type { WebhookDoc } from '../control/types.ts'
import type { Webhooks } from '../control/webhooks.ts'
import type { RequestError, WebhookRequestRecord, WebhookRequestStore } from '../store/requests-types.ts'
import type { Sandbox } from './sandbox-types.ts'
import { runPipeline, type PipelineResult } from './pipeline.ts'
import { createBreaker, type Breaker, type BreakerConfig } from './breaker.ts'
import { withinBudget } from './budget.ts'
import { verifySignature } from './verify.ts'
import { deliveryIdOf, deliveryKeys } from './delivery-id.ts'
import { isHolding } from './pause.ts'
import { countWebhookRequests, transformDuration } from './metrics.ts'
import { BRANCH_GROUP } from '../core/env-names.ts'

export interface TransformerDeps {
  source: Source<RawWebhookRequest>
  webhooks: Pick<Webhooks, 'get' | 'nameRules' | 'pauseOf' | 'releaseOf' | 'setReleased'>
  envs: Pick<Envs, 'get'>
  /** The shared lane's isolates, and the slow lane's own. */
  sandboxes: { shared: Sandbox; slow: Sandbox }
  requests: WebhookRequestStore
  outputs: { incoming: Output<EventRecord>; slow: Output<RawWebhookRequest> }
  /** The environment's schema modes; a blocked event fails its request (kept, replayable). */
  checkEvents?: CheckEvents
  log: Logger
}

export interface TransformerConfig extends EventLimits {
  /** `raw`, and the slow lane's topic (keyed by webhook like `raw`). */
  topics: { shared: string; slow: string }
  /** Consumer groups: the slow lane's is its own, so neither lane's backlog holds the other back. */
  groups: { shared: string; slow: string }
  maxBatchRecords: number
  /** One webhook's requests in flight at once, within a batch (a webhook on probation gets 1). */
  webhookConcurrency: number
  /** How long a transform call may run in the shared lane before its request moves to the slow lane. */
  budgetMs: number
  breaker: BreakerConfig
}

type Lane = 'shared' | 'slow'

type Delivery =
  | { kind: 'ok'; env: string; events: EventRecord[] }
  | { kind: 'unrouted'; events: EventInput[] }
  | { kind: 'deadLetter'; error: RequestError }
  | { kind: 'drop'; reason: string }
  | { kind: 'slow' } // shared lane only: the request goes to the slow lane, unrecorded until it runs there
  | { kind: 'held' } // shared lane only: the webhook is paused; kept in the request store until its resume

type Transformed = PipelineResult | { kind: 'slow' }

/** Outcomes that mean the sandbox stopped the transform: what the breaker counts. */
const LIMIT_KILLS = new Set(['TRANSFORM_TIMEOUT', 'TRANSFORM_MEMORY'])
/** Dead letters decided before the transform ran: they say nothing about it. */
const BEFORE_TRANSFORM = new Set(['JSON_INVALID', 'JSON_TOO_DEEP'])
/** Held requests read back from the store at a time, when a resume releases them. */
const RELEASE_PAGE = 200
/** How long a resume marker waits for this node to see its resume in the control docs, and how often it looks. */
const CONTROL_LAG_MS = 30_000
const CONTROL_POLL_MS = 50

export function createTransformer(deps: TransformerDeps, config: TransformerConfig) {
  const breaker = createBreaker(config.breaker)
  const lanes = (['shared', 'slow'] as const).map((lane) =>
    createConsumerStage(
      deps.source,
      { group: config.groups[lane], topics: [config.topics[lane]], maxBatchRecords: config.maxBatchRecords },
      createLaneHandler(deps, config, breaker, lane),
    ),
  )
  return {
    async start() {
      for (const lane of lanes) await lane.start()
    },
    async stop() {
      for (const lane of lanes) await lane.stop()
    },
  }
}

const transformKey = (webhook: WebhookDoc) => `${webhook.id}@${webhook.transformVersion}`

function pausedError(kills: number, until: number): RequestError {
  const message =
    `the transform hit its CPU, wall-time or memory limit ${kills} times in a row, so it is ` +
    `paused until ${new Date(until).toISOString()} (saving a new transform resumes it at once); ` +
    'this request was not run: replay it then'
  return { code: 'TRANSFORM_PAUSED', message }
}

function createLaneHandler(deps: TransformerDeps, config: TransformerConfig, breaker: Breaker, lane: Lane) {
  const sandbox = deps.sandboxes[lane]

  /** A branch-group webhook's environment comes from the request; none or unknown → unrouted. */
  function routeEnv(webhook: WebhookDoc, raw: RawWebhookRequest): string | undefined {
    if (webhook.env !== BRANCH_GROUP) return webhook.env
    const name = headerOf(raw.headers, 'x-service-env') ?? raw.query['x-service-env']?.[0]
    const env = name ? deps.envs.get(name) : undefined
    return env && env.kind === 'branch' && env.archivedAt === undefined ? env.name : undefined
  }

  async function deliver(raw: RawWebhookRequest, afterRelease: boolean): Promise<Delivery> {
    const webhook = deps.webhooks.get(raw.webhookId)
    if (!webhook) return { kind: 'drop', reason: 'the webhook was deleted' }
    // The slow lane holds nothing: its requests were admitted before the pause, like any in flight.
    if (lane === 'shared' && isHolding(deps.webhooks, webhook.id, afterRelease)) return { kind: 'held' }
    if (webhook.verification) {
      const verified = verifySignature(webhook.verification, raw)
      if (!verified.ok) return { kind: 'deadLetter', error: { code: 'SIGNATURE_INVALID', message: verified.reason } }
    }
    const result = await transformed(webhook, raw)
    switch (result.kind) {
      case 'deadLetter':
      case 'slow':
        return result
      case 'ok': {
        const env = routeEnv(webhook, raw)
        if (env === undefined) return { kind: 'unrouted', events: result.events }
        const envDoc = deps.envs.get(env)
        const where = (i: number) => (result.events.length === 1 ? 'event' : `events[${i}]`)
        const checked = envDoc && deps.checkEvents ? deps.checkEvents(envDoc, result.events, where) : undefined
        if (checked?.kind === 'refused')
          return { kind: 'deadLetter', error: { code: 'EVENT_SCHEMA_VIOLATION', message: checked.message } }
        const deliveryId = deliveryIdOf(webhook, raw, config.maxIdLength)
        const records = toRecords(raw, env, result.events, deliveryId)
        if (checked?.violations) withViolations(records, checked.violations)
        return { kind: 'ok', env, events: records }
      }
      default: {
        const never: never = result
        throw new Error(`unexpected pipeline result ${JSON.stringify(never)}`)
      }
    }
  }

  /**
   * The pipeline behind the breaker: a paused transform is not run; one that belongs in the slow
   * lane is sent there; in the shared lane a call is given up on after its budget; every run counts.
   */
  async function transformed(webhook: WebhookDoc, raw: RawWebhookRequest): Promise<Transformed> {
    const request = { text: rawBodyText(raw), headers: raw.headers, query: raw.query }
    const pipelineDeps = { sandbox, webhooks: deps.webhooks }
    if (webhook.transform === undefined) return runPipeline(pipelineDeps, webhook, request, config)
    const key = transformKey(webhook)
    const admission = breaker.admit(key)
    if (admission.kind === 'paused') return { kind: 'deadLetter', error: pausedError(admission.kills, admission.until) }
    let result: PipelineResult
    if (lane === 'shared') {
      if (admission.lane === 'slow') return { kind: 'slow' }
      const run = (budgeted: Sandbox) => runPipeline({ ...pipelineDeps, sandbox: budgeted }, webhook, request, config)
      const ended = transformDuration.startTimer({ lane })
      const budgeted = await withinBudget(sandbox, config.budgetMs, run, admission.probation)
      ended()
      if (budgeted.kind === 'overBudget') {
        breaker.record(key, 'overBudget')
        return { kind: 'slow' }
      }
      result = budgeted.value
    } else {
      const ended = transformDuration.startTimer({ lane })
      result = await runPipeline(pipelineDeps, webhook, request, config)
      ended()
    }
    if (result.kind === 'ok') breaker.record(key, 'ok')
    else if (LIMIT_KILLS.has(result.error.code)) breaker.record(key, 'limit')
    else if (!BEFORE_TRANSFORM.has(result.error.code)) breaker.record(key, 'ok')
    return result
  }

  /** How many of a webhook's requests may be in flight at once, asked again before each one starts. */
  function concurrencyOf(webhookId: string): number {
    const webhook = deps.webhooks.get(webhookId)
    if (webhook?.transform === undefined) return config.webhookConcurrency
    const admission = breaker.admit(transformKey(webhook))
    return admission.kind === 'run' && !admission.probation ? config.webhookConcurrency : 1
  }

  /**
   * Webhooks of one batch run side by side (the sandbox shares its isolates out by transform),
   * each publishing as soon as its own requests are done: a slow or hostile webhook holds back
   * only itself. The batch commits once every webhook is done.
   */
  return async function handle(requests: RawWebhookRequest[]): Promise<void> {
    const byWebhook = new Map<string, RawWebhookRequest[]>()
    for (const request of requests) {
      const group = byWebhook.get(request.webhookId)
      if (group) group.push(request)
      else byWebhook.set(request.webhookId, [request])
    }
    await Promise.all([...byWebhook.entries()].map(([id, group]) => handleWebhook(id, group)))
  }

  /**
   * One webhook's records of a batch, in order. A resume marker among them first releases the
   * requests held until then, oldest first, so they go before every request behind it.
   */
  async function handleWebhook(webhookId: string, records: RawWebhookRequest[]): Promise<void> {
    let afterRelease = false
    let segment: RawWebhookRequest[] = []
    for (const record of records) {
      if (!record.resumeMarker) {
        segment.push(record)
        continue
      }
      await handleRequests(webhookId, segment, afterRelease)
      segment = []
      afterRelease = (await release(webhookId, record.attempt)) || afterRelease
    }
    await handleRequests(webhookId, segment, afterRelease)
  }

  /**
   * At a resume marker (its `attempt` is the resume's `seq`): once this node's control docs show
   * that resume, unless the webhook was paused again since, every held request is delivered (a page
   * at a time, in arrival order), then the release recorded. A crash midway redelivers the marker,
   * which releases what is still held; IDs derived from each request make a repeat a duplicate.
   */
  async function release(webhookId: string, seq: number): Promise<boolean> {
    const pause = await caughtUp(webhookId, seq)
    if (!pause || pause.paused) return false
    let cursor: string | undefined
    let released = 0
    do {
      const page = await deps.requests.list({
        webhookId,
        status: 'held',
        limit: RELEASE_PAGE,
        cursor,
        oldestFirst: true,
      })
      await handleRequests(
        webhookId,
        page.requests.map((r) => r.request),
        true,
      )
      released += page.requests.length
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
    if ((deps.webhooks.releaseOf(webhookId)?.seq ?? 0) < seq)
      await deps.webhooks.setReleased({ id: webhookId, seq, releasedAt: Date.now() })
    deps.log.info({ webhook: fingerprint(webhookId), released }, 'held webhook requests released')
    return true
  }

  /**
   * The webhook's pause once this node has seen the resume `seq` (the control docs and `raw` travel
   * apart in distributed mode); undefined when the webhook is gone. Not caught up in time is an
   * infrastructure failure: the batch is retried.
   */
  async function caughtUp(webhookId: string, seq: number) {
    const deadline = Date.now() + CONTROL_LAG_MS
    for (;;) {
      if (!deps.webhooks.get(webhookId)) return undefined
      const pause = deps.webhooks.pauseOf(webhookId)
      if (pause && pause.seq >= seq) return pause
      if (Date.now() > deadline) throw new Error(`the control docs of a webhook did not reach its resume ${seq}`)
      await sleep(CONTROL_POLL_MS)
    }
  }

  /** Requests of one webhook: transformed, published in request order, outcomes recorded. */
  async function handleRequests(webhookId: string, requests: RawWebhookRequest[], afterRelease: boolean) {
    if (requests.length === 0) return
    const deliveries = await inTurn(
      requests,
      () => concurrencyOf(webhookId),
      (request) => deliver(request, afterRelease),
    )
    const processedAt = Date.now()
    const events: EventRecord[] = []
    const records: WebhookRequestRecord[] = []
    const slow: RawWebhookRequest[] = []
    deliveries.forEach((delivery, i) => {
      const request = requests[i]
      const base = { request, processedAt, env: null, eventIds: [], events: [], error: null }
      const logged = { webhook: fingerprint(request.webhookId), requestId: request.requestId }
      switch (delivery.kind) {
        case 'ok':
          events.push(...delivery.events)
          return void records.push({
            ...base,
            status: 'delivered',
            env: delivery.env,
            eventIds: delivery.events.map((e) => e.internalId),
          })
        case 'unrouted':
          return void records.push({ ...base, status: 'unrouted', events: delivery.events })
        case 'deadLetter':
          deps.log.info({ ...logged, code: delivery.error.code }, 'webhook request dead-lettered')
          return void records.push({ ...base, status: 'failed', error: delivery.error })
        case 'drop':
          return void deps.log.info({ ...logged, reason: delivery.reason }, 'webhook request dropped')
        case 'slow':
          deps.log.debug(logged, 'webhook request moved to the slow lane')
          return void slow.push(request)
        case 'held':
          return void records.push({ ...base, status: 'held' })
        default: {
          const never: never = delivery
          throw new Error(`unexpected delivery ${JSON.stringify(never)}`)
        }
      }
    })
    // Events first, then outcomes: a crash in between redelivers the batch, which yields the
    // same IDs, so dedup and the idempotent store absorb the repeat. Requests for the slow lane
    // are durable there before this batch commits; a redelivery may send one twice, and its
    // deterministic IDs make the second run a duplicate, not a second event.
    await Promise.all([deps.outputs.incoming.publish(events), deps.outputs.slow.publish(slow)])
    await deps.requests.record(records)
    countWebhookRequests(deliveries)
  }
}

/**
 * `work` over `items`, at most `width()` at a time (asked again before each item starts, so a
 * webhook that turns suspect mid-batch drops to one at a time), results in item order.
 */
async function inTurn<T, R>(items: T[], width: () => number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  async function worker(slot: number): Promise<void> {
    while (next < items.length && (slot === 0 || slot < width())) {
      const i = next++
      results[i] = await work(items[i])
    }
  }
  const workers = Math.max(1, Math.min(width(), items.length))
  await Promise.all(Array.from({ length: workers }, (_, slot) => worker(slot)))
  return results
}

/**
 * Deterministic IDs: internal IDs from (request, attempt), so a redelivered record yields the
 * same ones; dedup keys (for events without `id`) from the provider's delivery ID when there is
 * one (its retries are other requests), else from the request alone: either way a replay of a
 * request whose events were already delivered is recorded as a duplicate, not run twice.
 */
export function toRecords(
  raw: RawWebhookRequest,
  env: string,
  events: EventInput[],
  deliveryId?: string,
): EventRecord[] {
  const seed = (attempt: number) =>
    `${raw.receivedAt},${createHash('sha256').update(`${raw.requestId}:${attempt}`).digest().subarray(0, 10).toString('base64')}`
  const internalIds = seededUlids(seed(raw.attempt), events.length)
  const dedupIds =
    deliveryId !== undefined
      ? deliveryKeys(deliveryId, events.length)
      : raw.attempt === 1
        ? internalIds
        : seededUlids(seed(1), events.length)
  return toEventRecords(events, {
    internalIds,
    dedupIds,
    env,
    receivedAt: raw.receivedAt,
    source: { kind: 'webhook', webhookId: raw.webhookId, requestId: raw.requestId },
  })
}
