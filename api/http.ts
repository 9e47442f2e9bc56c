// The HTTP server that ingest and the REST API register on. Errors leave as
// `{status, code, error}` with the same number in the HTTP status.
import swagger from '@fastify/swagger'
import type { ErrorObject } from 'ajv'
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { SluiceError, errorCode, type ErrorCode } from '../core/errors.ts'
import type { EventLimits } from '../core/event.ts'
import { swaggerOptions } from './openapi.ts'
import { validationError, validatorCompiler } from './validation.ts'
import { safePath } from '../core/fingerprint.ts'

/** A plain GET route beside the API (/healthz, /readyz): the same handlers serve the ops listener of non-HTTP roles. */
export type OpsRoutes = Record<string, () => Promise<{ status: number; contentType: string; body: string }>>

export interface HttpConfig { host: string; port: number; trustProxy: string[] | false; eventLimits: EventLimits }

export type RoutePlugin = (app: FastifyInstance) => Promise<void>

export function createHttpServer(config: HttpConfig, log: Logger, plugins: RoutePlugin[], opsRoutes: OpsRoutes = {}) {
  const app = Fastify({
    loggerInstance: log,
    // Per-request log lines would dominate the hot path; errors are logged by the handler below.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.trustProxy === false ? false : config.trustProxy,
    // On close, requests in flight finish (a graceful shutdown answers them); idle keep-alive
    // connections are closed at once and, in stop() below, as soon as each goes idle.
    forceCloseConnections: 'idle',
  })
  app.setValidatorCompiler(validatorCompiler)
  // Before the routes: it collects them as they are added.
  app.register(swagger, swaggerOptions(config.eventLimits))
  app.setErrorHandler((err, request, reply) => {
    const sluice = toSluiceError(err)
    if (sluice.statusCode >= 500) request.log.error({ err }, 'request failed')
    return reply.code(sluice.statusCode).send(sluice.toBody())
  })
  app.setNotFoundHandler((request, reply) => reply.code(404).send(new SluiceError('NOT_FOUND', `${request.method} ${safePath(request.url)}: no such route`).toBody()))
  const routes: string[] = []
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD' && method !== 'OPTIONS') routes.push(`${method} ${route.url}`)
  })
  for (const plugin of plugins) app.register(plugin)
  // For load balancers and Kubernetes probes (cli/health.ts).
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
        throw new SluiceError('CONFIG_INVALID', `port (--port / SLUICE_PORT): ${config.host}:${config.port} is in use; stop the other process or pick another port`, { cause: err })
      }
      const address = app.server.address()
      const port = typeof address === 'object' && address ? address.port : config.port
      return `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`
    },
    async stop() {
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
  const byStatus: Record<number, ErrorCode> = { 413: 'BODY_TOO_LARGE', 400: 'REQUEST_INVALID', 415: 'REQUEST_INVALID', 404: 'NOT_FOUND' }
  if (e.statusCode && byStatus[e.statusCode]) {
    const mapped = e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'JSON_INVALID' : byStatus[e.statusCode]
    return new SluiceError(mapped, e.message)
  }
  return new SluiceError('INTERNAL', 'internal error', { cause: err })
}
