// The ops listener of every sluice start and runner process, whatever its roles: /healthz and /readyz
// for Kubernetes probes, /metrics for Prometheus, on --ops-port, a port no Ingress exposes. node:http,
// not fastify: a few GET routes need no framework, and a process without HTTP roles loads no HTTP stack.
import { createServer } from 'node:http'
import { createServer as createTcpServer } from 'node:net'
import { SluiceError } from '../core/errors.ts'
import type { OpsResponse, OpsRoute } from '../core/health.ts'
import { clientErrorHandler } from './edge.ts'

export function createOpsServer(config: { host: string; port: number }, routes: Record<string, OpsRoute>) {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    const route = request.method === 'GET' || request.method === 'HEAD' ? routes[path] : undefined
    const answer = route ? route() : Promise.resolve(notFound(`${request.method} ${path}: no such route`))
    answer.then(
      (r) => {
        response.writeHead(r.status, { 'content-type': r.contentType })
        response.end(request.method === 'HEAD' ? undefined : r.body)
      },
      () => response.writeHead(500).end(),
    )
  })
  // Bytes that do not parse as a request get the documented shape here too, not node's bare 400.
  server.on('clientError', clientErrorHandler)
  return {
    async start(): Promise<string> {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(config.port, config.host, () => resolve())
      }).catch((err) => {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err
        const where = `${config.host}:${config.port}`
        const message = `opsPort (--ops-port / SLUICE_OPS_PORT): ${where} is in use`
        throw new SluiceError('CONFIG_INVALID', message, { cause: err })
      })
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : config.port
      return `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`
    },
    async stop(): Promise<void> {
      server.closeAllConnections() // probes only: nothing in flight worth waiting for
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

function notFound(error: string): OpsResponse {
  const body = JSON.stringify({ status: 404, code: 'NOT_FOUND', error })
  return { status: 404, contentType: 'application/json', body }
}

/**
 * Fails at once when the port is taken, before a composition root spends seconds connecting to
 * Kafka and ClickHouse; the real listener binds it moments later.
 */
export async function checkPortFree(host: string, port: number, setting: string): Promise<void> {
  if (port === 0) return
  const probe = createTcpServer()
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject)
    probe.listen(port, host, () => probe.close(() => resolve()))
  }).catch((err) => {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err
    const message = `${setting}: ${host}:${port} is in use; stop the other process or pick another port`
    throw new SluiceError('CONFIG_INVALID', message, { cause: err })
  })
}
