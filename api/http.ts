// The HTTP server that ingest and the REST API register on. Errors leave as
// `{status, code, error}` with the same number in the HTTP status.
import { isUtf8 } from 'node:buffer'
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler'
import swagger from '@fastify/swagger'
import type { ErrorObject } from 'ajv'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify'
import type { Bindings, ChildLoggerOptions, Logger } from 'pino'
import { SluiceError, errorCode, type ErrorCode } from '../core/errors.ts'
import type { EventLimits } from '../core/event.ts'
import {
  applyLimits,
  clientErrorHandler,
  continueOnceAdmitted,
  answerExpect,
  hostGuard,
  type HttpLimits,
} from './edge.ts'
import { FASTIFY_ERRORS, routeErrorMessage } from './fastify-errors.ts'
import { answerSeries, UNMATCHED_ROUTE } from './metrics.ts'
import { swaggerOptions } from './openapi.ts'
import { validationError, validatorCompiler } from './validation.ts'

/**
 * fastify's response serializers (`compilers`: fast-json-stringify's), each compiled when its route
 * first answers with that status, not at start. Compiled at start, the ~500 of the API's routes and
 * statuses held ~20 MB of generated source, code and Ajv instances for the life of the process, most
 * of them for routes a given deployment never calls (docs/operations.md, "Memory").
 */
export function lazySerializers(compilers: SerializerFactory = SerializerSelector()): SerializerFactory {
  return (externalSchemas, options) => {
    const compile = compilers(externalSchemas, options)
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined
      return (doc) => {
        serialize ??= compile(route)
        return serialize(doc)
      }
    }
  }
}

/** A plain GET route beside the API (/healthz, /readyz): the same handlers serve the ops listener. */
export type OpsRoutes = Record<string, () => Promise<{ status: number; contentType: string; body: string }>>

export interface HttpConfig {
  host: string
  port: number
  trustProxy: string[] | false
  eventLimits: EventLimits
  /** Timeouts and the connection cap (config/config.ts). */
  limits: HttpLimits
  /** Set in dev mode: only loopback names, IP literals, `host` and these may be in `Host`. */
  allowedHosts?: string[]
}

export type RoutePlugin = (app: FastifyInstance) => Promise<void>

export function createHttpServer(config: HttpConfig, log: Logger, plugins: RoutePlugin[], opsRoutes: OpsRoutes = {}) {
  const app = Fastify({
    loggerInstance: log,
    // Per-request log lines would dominate the hot path; errors are logged by the handler below.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    trustProxy: config.trustProxy === false ? false : config.trustProxy,
    // On close, requests in flight finish (a graceful shutdown answers them); idle keep-alive
    // connections are closed at once and, in stop() below, as soon as each goes idle.
    forceCloseConnections: 'idle',
    // Our own 503 below, in the documented shape, instead of fastify's.
    return503OnClosing: false,
    clientErrorHandler,
    frameworkErrors: (err, _request, reply) => {
      const sluice = toSluiceError(err)
      const body = JSON.stringify(sluice.toBody())
      reply.raw
        .writeHead(sluice.statusCode, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(body),
        })
        .end(body)
    },
    // node checks request and headers timeouts this often (30 s by default, which let slow
    // headers live for ~78 s).
    http: { connectionsCheckingInterval: 1000 },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
  })
  app.setValidatorCompiler(validatorCompiler)
  // Before the routes: it collects them as they are added.
  app.register(swagger, swaggerOptions(config.eventLimits))
  applyLimits(app.server, config.limits)
  answerExpect(app.server)
  let closing = false
  // The hooks every request runs take fastify's callback form: an async hook costs each request a
  // promise and a turn of the microtask queue.
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done()
    reply.header('connection', 'close')
    done(new SluiceError('SERVER_CLOSING', 'the server is shutting down; retry'))
  })
  if (config.allowedHosts) app.addHook('onRequest', hostGuard(config.host, config.allowedHosts))
  app.addHook('preParsing', continueOnceAdmitted)
  app.addHook('onResponse', (request, reply, done) => {
    // A request that matched no route (404) has no template: one label for all of them.
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE
    const series = answerSeries(request.method, route, reply.statusCode)
    series.count.inc()
    series.duration.observe(reply.elapsedTime / 1000)
    done()
  })
  app.setErrorHandler((err, request, reply) => {
    const sluice = toSluiceError(err)
    if (sluice.statusCode >= 500) request.log.error({ err }, 'request failed')
    // Answered before its body was read (bad key, over the limit): the rest of the body is not
    // worth reading, and a connection mid-body cannot carry another request.
    if (request.raw.complete === false) reply.header('connection', 'close')
    // Every 503 says when to come back (RFC 9110): a second, unless the refusal set its own. The
    // client library waits at least that long, and longer as its backoff grows.
    if (sluice.statusCode === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1')
    return reply.code(sluice.statusCode).send(sluice.toBody())
  })
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(new SluiceError('NOT_FOUND', routeErrorMessage(request.method, request.url)).toBody())
  })
  const parseJson = app.getDefaultJsonParser('error', 'error') as JsonParser
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonParser(parseJson))
  const routes: string[] = []
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      if (method !== 'HEAD' && method !== 'OPTIONS') routes.push(`${method} ${route.url}`)
  })
  for (const plugin of plugins) app.register(plugin)
  // For load balancers and Kubernetes probes (core/health.ts).
  for (const [path, route] of Object.entries(opsRoutes)) {
    app.get(path, async (_request, reply) => {
      const answer = await route()
      return reply.code(answer.status).type(answer.contentType).send(answer.body)
    })
  }
  return {
    app,
    /** Every route served, as `METHOD /path/:param` (the OpenAPI test compares them with the document). */
    routes: () => [...routes],
    async start(): Promise<string> {
      try {
        await app.listen({ host: config.host, port: config.port })
      } catch (err) {
        if ((err as { code?: string }).code !== 'EADDRINUSE') throw err
        throw new SluiceError(
          'CONFIG_INVALID',
          `port (--port / SLUICE_PORT): ${config.host}:${config.port} is in use; stop the other process or pick another port`,
          { cause: err },
        )
      }
      const address = app.server.address()
      const port = typeof address === 'object' && address ? address.port : config.port
      return `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`
    },
    async stop() {
      closing = true
      // Node closes the connections idle when close() starts; a keep-alive connection whose request
      // finishes later would hold close() until its keep-alive timeout.
      const idle = setInterval(() => app.server.closeIdleConnections(), 50)
      try {
        await app.close()
      } finally {
        clearInterval(idle)
      }
    },
  }
}

// fastify's own errors (body too large, bad content) mapped onto the catalogue.
function toSluiceError(err: unknown): SluiceError {
  if (err instanceof SluiceError) return err
  const validation = err as { validation?: ErrorObject[]; validationContext?: string }
  if (Array.isArray(validation.validation)) return validationError(validation.validation, validation.validationContext)
  const code = errorCode(err)
  if (code) return new SluiceError(code, (err as Error).message)
  const e = err as { statusCode?: number; code?: string; message?: string; validation?: unknown }
  const byStatus: Record<number, ErrorCode> = {
    413: 'BODY_TOO_LARGE',
    400: 'REQUEST_INVALID',
    415: 'CONTENT_TYPE_UNSUPPORTED',
    404: 'NOT_FOUND',
  }
  const known = e.code ? FASTIFY_ERRORS[e.code] : undefined
  if (known) return new SluiceError(known[0], known[1] ?? e.message)
  if (e.statusCode && byStatus[e.statusCode]) return new SluiceError(byStatus[e.statusCode], e.message)
  return new SluiceError('INTERNAL', 'internal error', { cause: err })
}

/**
 * fastify's JSON parser (which refuses `__proto__` and `constructor.prototype` keys) with two
 * changes: an empty body is no body (a DELETE with `Content-Type: application/json` is fine),
 * and bytes that are not UTF-8 are refused rather than turned into U+FFFD.
 */
function jsonParser(parse: JsonParser) {
  return (request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    const bytes = body as Buffer
    if (bytes.length === 0) return done(null, undefined)
    if (!isUtf8(bytes)) return done(new SluiceError('JSON_INVALID', 'body: not valid UTF-8'), undefined)
    parse(request, bytes.toString('utf8'), done)
  }
}

// The callback form getDefaultJsonParser returns (its declared type is a union with the promise form).
type JsonParser = (request: FastifyRequest, body: string, done: (err: Error | null, body?: unknown) => void) => void

/**
 * A request's logger, made into a pino child on its first line: fastify makes one per request,
 * and pino runs each child's bindings through its redaction (~4 µs), for requests that mostly
 * log nothing (request logging is off). One object per request; its methods are shared.
 */
class LazyChildLogger {
  #parent: FastifyBaseLogger
  #bindings: Bindings
  #options: ChildLoggerOptions
  #child: FastifyBaseLogger | undefined
  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }
  get #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options)
    return this.#child
  }
  get level() {
    return this.#real.level
  }
  set level(level: string) {
    this.#real.level = level
  }
  child(bindings: Bindings, options?: ChildLoggerOptions) {
    return this.#real.child(bindings, options)
  }
  silent() {}
  fatal(...args: LogArgs) {
    this.#real.fatal(...args)
  }
  error(...args: LogArgs) {
    this.#real.error(...args)
  }
  warn(...args: LogArgs) {
    this.#real.warn(...args)
  }
  info(...args: LogArgs) {
    this.#real.info(...args)
  }
  debug(...args: LogArgs) {
    this.#real.debug(...args)
  }
  trace(...args: LogArgs) {
    this.#real.trace(...args)
  }
}
type LogArgs = Parameters<Logger['info']>

function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
  return new LazyChildLogger(parent, bindings, options) as unknown as FastifyBaseLogger
}
