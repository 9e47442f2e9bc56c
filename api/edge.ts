// What the HTTP server answers before (or instead of) a route: node's parser errors, timeouts,
// `Expect`, the connection cap, and the dev server's Host check. Each answer has the
// documented `{status, code, error}` shape, so a client never has to parse two formats.
import { isIP } from 'node:net'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import { SluiceError, type ErrorCode } from '../core/errors.ts'

export interface HttpLimits {
  /** Whole request (headers and body) must arrive within this; 0 for none. */
  requestTimeoutMs: number
  /** Headers must arrive within this. */
  headersTimeoutMs: number
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number
  /** A socket with no traffic either way is closed after this. */
  socketIdleTimeoutMs: number
  /** Connections past this are refused at accept; 0 for none. */
  maxConnections: number
}

/** Applies the limits to the node server fastify made. */
export function applyLimits(server: Server, limits: HttpLimits): void {
  server.requestTimeout = limits.requestTimeoutMs
  // node measures both from the request's start and expects headers ≤ request (its constructor
  // refuses the opposite); past it, a slow body outlived the request timeout until the headers one.
  const { headersTimeoutMs, requestTimeoutMs } = limits
  server.headersTimeout = requestTimeoutMs > 0 ? Math.min(headersTimeoutMs, requestTimeoutMs) : headersTimeoutMs
  server.keepAliveTimeout = limits.keepAliveTimeoutMs
  server.timeout = limits.socketIdleTimeoutMs
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections
}

/**
 * node answers `Expect: 100-continue` at once, inviting the body before the key was checked.
 * Instead the request goes straight to fastify, and `continueOnceAdmitted` (a `preParsing` hook)
 * answers 100 once the route's onRequest hooks (authentication, body limits) have passed.
 */
export function answerExpect(server: Server): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    server.emit('request', request, response)
  })
  // Without a listener node answers 417 with an empty body.
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const expect = printable(request.headers.expect)
    const error = new SluiceError('EXPECTATION_FAILED', `expect: "${expect}" is not supported (only 100-continue)`)
    const body = JSON.stringify(error.toBody())
    response.writeHead(error.statusCode, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    })
    response.end(body)
  })
}

export function continueOnceAdmitted(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: RequestPayload,
  done: (err: Error | null, payload: RequestPayload) => void,
) {
  const expectsContinue = request.headers.expect?.toLowerCase() === '100-continue'
  if (expectsContinue && !reply.raw.headersSent) reply.raw.writeContinue()
  done(null, payload)
}

// node's HTTP parser refuses a request before fastify sees it; its error codes, by what they mean.
const CLIENT_ERRORS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: ['HEADERS_TOO_LARGE', 'headers: larger than the server accepts'],
  ERR_HTTP_REQUEST_TIMEOUT: ['REQUEST_TIMEOUT', 'request: not received in time'],
  ERR_HTTP_HEADERS_TIMEOUT: ['REQUEST_TIMEOUT', 'headers: not received in time'],
}

/** fastify's `clientErrorHandler`: the answer to a request node could not parse, then close. */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [code, message] = CLIENT_ERRORS[err.code ?? ''] ?? [
    'REQUEST_INVALID',
    `request: not valid HTTP/1.1 (${err.code ?? 'parse error'})`,
  ]
  const error = new SluiceError(code, message)
  const body = JSON.stringify(error.toBody())
  const answer = () => {
    if (!socket.writable) {
      socket.destroy()
      return
    }
    socket.once('finish', () => socket.destroy())
    socket.end(
      `HTTP/1.1 ${error.statusCode} ${STATUS_TEXT[error.statusCode] ?? 'Error'}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  if (!pending || pending.writableFinished) {
    answer()
    return
  }
  // A pipelined request that does not parse while the one before it, fully received, is still
  // being answered: that answer goes out first, then this one.
  if (pending.req.complete) {
    pending.once('finish', answer)
    return
  }
  // The request being answered is the one that timed out mid-body: its answer is this one.
  if (pending.headersSent) socket.destroy()
  else answer()
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
}

/**
 * The dev server's defence against DNS rebinding: a page on evil.example that re-points its
 * name to 127.0.0.1 still sends `Host: evil.example`. IP literals cannot be rebound, so they pass,
 * as do loopback names, the configured host and `allowed`.
 */
export function hostGuard(configuredHost: string, allowed: string[]) {
  const names = new Set(['localhost', configuredHost.toLowerCase(), ...allowed.map((h) => h.toLowerCase())])
  // Host headers already let through, as sent: a server sees a handful, and the check is per request.
  const passed = new Set<string>()
  return (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    const header = request.headers.host
    if (header !== undefined && passed.has(header)) return done()
    const host = hostName(header)
    if (host !== undefined && (names.has(host) || host.endsWith('.localhost') || isIP(host) !== 0)) {
      if (passed.size < 100) passed.add(header!)
      return done()
    }
    const given = printable(request.headers.host)
    done(
      new SluiceError(
        'HOST_NOT_ALLOWED',
        `host: "${given}" is not a name this dev server answers to; add it with --allowed-hosts / SLUICE_ALLOWED_HOSTS`,
      ),
    )
  }
}

/** The name part of a Host header (`[::1]:8288` → `::1`), lower-cased; undefined when there is none. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined
  const host = header.startsWith('[') ? header.slice(1, header.indexOf(']')) : header.replace(/:\d*$/, '')
  return host === '' ? undefined : host.toLowerCase()
}

// Header values echoed in a message: short, and only visible ASCII.
function printable(value: string | undefined): string {
  return (value ?? '').slice(0, 64).replace(/[^\x20-\x7e]/g, '?')
}
