// The ingest stage: the HTTP edge. It authenticates, enforces limits, validates Event API
// payloads synchronously (a batch is all-or-nothing), assigns ULIDs, and answers only once
// the records are durable in the log.
import { isUtf8 } from 'node:buffer'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { Output } from '../bus/output.ts'
import { SluiceError, errorCode } from '../core/errors.ts'
import { jsonProblem } from '../core/json-problem.ts'
import {
  toEventRecords,
  validateEventBody,
  type EventLimits,
  type EventRecord,
  type EventSource,
} from '../core/event.ts'
import { newUlids, seededUlids } from '../core/ids.ts'
import type { Envs } from '../control/envs.ts'
import type { Keys } from '../control/keys.ts'
import { withViolations, type CheckEvents } from '../control/schema-check.ts'
import type { WebhookDoc } from '../control/types.ts'
import { readBody } from './body.ts'
import { resolveTarget, type Target } from './target.ts'
import { createRateLimiter } from './rate-limit.ts'
import { acceptedIn, bodyBytes, envLabel, requestsRejected, webhookRequestsAccepted } from './metrics.ts'

/** The webhook side of `/e/<id>` (webhook IDs and event keys share the path). */
export interface WebhookIngest {
  owns(id: string): boolean
  /** Checks what needs no body (the webhook, its state, the source IP); throws the refusal. */
  admit(request: KeyRequest): WebhookAdmission
  handle(request: KeyRequest, reply: FastifyReply, body: Buffer, admission: WebhookAdmission): Promise<unknown>
}

export interface WebhookAdmission {
  webhook: WebhookDoc
  ip: string
  maxBodyBytes: number
}

// What a request was admitted as, decided from its URL and headers before its body is read.
type Admission =
  | { kind: 'event'; target: Target; maxBodyBytes: number }
  | { kind: 'webhook'; webhook: WebhookAdmission; maxBodyBytes: number }

export type KeyRequest = FastifyRequest<{ Params: { key?: string } }>

const ADMISSION = Symbol('admission')
/** The source of every event sent without a key (a Dev Server): one object, which the store's values tell shared without comparing it. */
const API_SOURCE: EventSource = Object.freeze({ kind: 'api' })
type AdmittedRequest = FastifyRequest & { [ADMISSION]: Admission | null }

export interface IngestDeps {
  keys: Keys
  envs: Envs
  outputs: { incoming: Output<EventRecord> }
  /** The environment's schema modes (control/schema-check.ts). */
  checkEvents: CheckEvents
  webhooks?: WebhookIngest
  /** Embedded mode: resolves true once the stages after ingest are within their backlog limit, false if they stay behind. */
  settle?: () => Promise<boolean>
  log: Logger
}

export interface IngestConfig extends EventLimits {
  devMode: boolean
  /** Default body limit; an environment may set its own (EnvDoc.maxBodyBytes). */
  maxBodyBytes: number
  /** The most any request's body may be, whatever an environment sets. */
  maxBodyCeilingBytes: number
  /** Default Event API rate limit per environment (events/s on this node), 0 for none; an environment may set its own. */
  maxEventsPerSecond: number
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'content-type, x-service-env, x-service-event-id-seed',
  'access-control-allow-methods': 'POST, OPTIONS',
}

export function createIngest(deps: IngestDeps, config: IngestConfig) {
  const limiter = createRateLimiter()

  function admit(request: KeyRequest): Admission {
    const key = request.params.key ?? ''
    if (deps.webhooks?.owns(key)) {
      const webhook = deps.webhooks.admit(request)
      return { kind: 'webhook', webhook, maxBodyBytes: Math.min(webhook.maxBodyBytes, config.maxBodyCeilingBytes) }
    }
    const envHeader = headerValue(request.headers['x-service-env'])
    const target = resolveTarget(key, envHeader, config.devMode, deps.keys, deps.envs)
    const maxBodyBytes = Math.min(target.env.maxBodyBytes ?? config.maxBodyBytes, config.maxBodyCeilingBytes)
    return { kind: 'event', target, maxBodyBytes }
  }

  async function eventApi(request: FastifyRequest, reply: FastifyReply, target: Target, body: Buffer) {
    const { env } = target
    const checked = checkedEvents(env, body)
    const perSecond = env.maxEventsPerSecond ?? config.maxEventsPerSecond
    const waitMs = perSecond > 0 ? limiter.take(env.name, perSecond, checked.events.length) : 0
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000)
      reply.header('retry-after', String(seconds))
      throw new SluiceError(
        'RATE_LIMITED',
        `events: environment "${env.name}" takes ${perSecond} events per second; retry in ${seconds} s`,
      )
    }
    // Backpressure: the request waits while the pipeline catches up, so memory and the backlog stay
    // bounded and senders go at the pace the machine stores events.
    if (deps.settle && !(await deps.settle())) {
      reply.header('retry-after', '1')
      throw new SluiceError('PIPELINE_BEHIND', 'events: the pipeline is behind; retry in 1 s')
    }
    return publishEvents(request, target, checked)
  }

  /** The body's events, valid and checked against their schemas (a batch is all-or-nothing), else the refusal. */
  function checkedEvents(env: Target['env'], body: Buffer) {
    // Checked before decoding: toString would turn each bad byte into U+FFFD, and two different IDs into one.
    if (!isUtf8(body)) throw new SluiceError('JSON_INVALID', 'body: not valid UTF-8')
    let parsed: unknown
    try {
      parsed = JSON.parse(body.toString('utf8'))
    } catch (err) {
      throw new SluiceError('JSON_INVALID', `body: not valid JSON (${jsonProblem(err)})`)
    }
    const validation = validateEventBody(parsed, config)
    if (!validation.ok) throw new SluiceError(validation.code, validation.message)
    // Before the ack and before the rate limit: a blocked batch is refused whole and costs no quota.
    const checked = deps.checkEvents(env, validation.events, eventIndex)
    if (checked.kind === 'refused') throw new SluiceError('EVENT_SCHEMA_VIOLATION', checked.message)
    return { events: validation.events, violations: checked.violations }
  }

  /**
   * Publishes the events; resolves with the answer once they are durable. Not async: what waits for
   * the log keeps the IDs and the count, not the events (which would live through the WAL sync, and
   * so through V8's young generation).
   */
  function publishEvents(
    request: FastifyRequest,
    { env, keyId }: Target,
    checked: ReturnType<typeof checkedEvents>,
  ): Promise<{ ids: string[]; status: number }> {
    const seed = headerValue(request.headers['x-service-event-id-seed'])
    const receivedAt = Date.now()
    const count = checked.events.length
    const ids = seed ? seededUlids(seed, count) : newUlids(count, receivedAt)
    const records = toEventRecords(checked.events, {
      internalIds: ids,
      env: env.name,
      receivedAt,
      source: keyId ? { kind: 'api', keyId } : API_SOURCE,
    })
    if (checked.violations) withViolations(records, checked.violations)
    let published: Promise<void>
    try {
      published = deps.outputs.incoming.publish(records)
    } catch (err) {
      published = Promise.reject(err) // an output that throws rather than rejects is answered the same
    }
    return published.then(
      () => {
        acceptedIn(env.name).inc(count)
        return { ids, status: 200 }
      },
      (err) => {
        // Never a 200 for records that are not durable; the producer retries with the same seed.
        throw new SluiceError('LOG_UNAVAILABLE', 'the event log cannot take records right now; retry', { cause: err })
      },
    )
  }

  return {
    /** Registers `/e/<key or webhook id>` in its own scope (raw bodies, open CORS in dev). */
    routes: async (app: FastifyInstance) => {
      if (config.devMode) {
        // The dashboard's "Send to Dev Server" posts from the browser, which sends Origin on every
        // cross-origin request (its preflight too); a request without it is not a browser's, and
        // its answer goes without the headers (three fewer for node to check and send).
        app.addHook('onRequest', (request, reply, done) => {
          if (request.headers.origin !== undefined) reply.headers(CORS_HEADERS)
          done()
        })
        // A preflight is answered from its headers, before any body it carries is read or parsed.
        // (A hook that answers ends the request there; the handler never runs.)
        const preflight = (_request: FastifyRequest, reply: FastifyReply, _done: () => void) => {
          reply.code(204).send()
        }
        const answered = async () => {}
        app.options('/e/*', { onRequest: preflight }, answered)
        app.options('/e', { onRequest: preflight }, answered)
      }
      app.register(admittedRoutes)
    },
    async start() {},
    async stop() {},
  }

  /**
   * The Event API and webhook routes, in a scope of their own: every route here admits its request
   * before the body (onRequest), so the raw-body parser always knows whose limit applies.
   */
  async function admittedRoutes(app: FastifyInstance) {
    // Set by onRequest, on every request of this scope (a decoration keeps fastify's request objects one shape).
    app.decorateRequest(ADMISSION, null)
    const admissionOf = (request: FastifyRequest) => (request as AdmittedRequest)[ADMISSION]
    // Before any byte of the body is read: a wrong key costs the sender one round trip and
    // the server no memory, and the body limit that applies is known.
    app.addHook('onRequest', (request: KeyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
      try {
        const admitted = request as AdmittedRequest
        admitted[ADMISSION] = admit(request)
      } catch (err) {
        return done(err as Error)
      }
      done()
    })
    app.removeAllContentTypeParsers()
    const rawBody = (
      request: FastifyRequest,
      payload: IncomingMessage,
      done: (err: Error | null, body?: Buffer) => void,
    ) => {
      const admission = admissionOf(request)!
      const whose = () => (admission.kind === 'event' ? `environment "${admission.target.env.name}"` : 'this webhook')
      readBody(payload, admission.maxBodyBytes, whose, done)
    }
    app.addContentTypeParser('*', rawBody)
    // The same parser, named: fastify caches a named type's parser by the header's text, but parses
    // the header into a media type on every request that falls through to '*'.
    app.addContentTypeParser('application/json', rawBody)
    const handler = async (request: KeyRequest, reply: FastifyReply) => {
      const body = (request.body as Buffer | undefined) ?? Buffer.alloc(0)
      const admission = admissionOf(request)!
      bodyBytes[admission.kind].observe(body.length)
      if (admission.kind === 'event') return eventApi(request, reply, admission.target, body)
      const answer = await deps.webhooks!.handle(request, reply, body, admission.webhook)
      webhookRequestsAccepted.inc()
      return answer
    }
    // Every refusal, from the key check to the log's: by API, environment (when the key named one) and code.
    app.addHook('onError', async (request: KeyRequest, _reply, error) => {
      const admission = admissionOf(request)
      const webhook = admission ? admission.kind === 'webhook' : deps.webhooks?.owns(request.params.key ?? '')
      const env = admission?.kind === 'event' ? envLabel(admission.target.env.name) : ''
      requestsRejected.inc({ api: webhook ? 'webhook' : 'event', env, code: errorCode(error) ?? 'INTERNAL' })
    })
    app.post('/e/:key', handler)
    app.post('/e', handler)
  }
}

const eventIndex = (i: number) => `events[${i}]`

function headerValue(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value
  return v === undefined || v === '' ? undefined : v
}
