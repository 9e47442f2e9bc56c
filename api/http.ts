// The HTTP server that ingest and the REST API register on. Errors leave as
// `{status, code, error}` with the same number in the HTTP status.
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { SluiceError, errorCode, type ErrorCode } from '../core/errors.ts'
import { safePath } from '../core/fingerprint.ts'

export interface HttpConfig { host: string; port: number; trustProxy: string[] | false }

export type RoutePlugin = (app: FastifyInstance) => Promise<void>

export function createHttpServer(config: HttpConfig, log: Logger, plugins: RoutePlugin[]) {
  const app = Fastify({
    loggerInstance: log,
    // Per-request log lines would dominate the hot path; errors are logged by the handler below.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.trustProxy === false ? false : config.trustProxy,
    forceCloseConnections: true,
  })
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
  // For load balancers and Kubernetes probes: the process is up and serving HTTP.
  app.get('/healthz', async () => ({ status: 'ok' }))
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
    stop: () => app.close(),
  }
}

// fastify's own errors (body too large, bad content) mapped onto the catalogue.
function toSluiceError(err: unknown): SluiceError {
  if (err instanceof SluiceError) return err
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
