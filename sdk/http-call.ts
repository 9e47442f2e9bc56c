// One HTTP request to an app: node:http with keep-alive (a runner calls the same apps all day),
// a connect timeout, a response timeout and a cap on the answer's size, each failing with its
// own code so a run shows why a call failed.
import { request as httpRequest, Agent as HttpAgent } from 'node:http'
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https'

export interface CallLimits {
  connectTimeoutMs: number
  responseTimeoutMs: number
  maxResponseBytes: number
}

export type CallResult =
  | { ok: true; status: number; headers: Record<string, string | string[] | undefined>; body: string }
  | { ok: false; code: 'SDK_UNREACHABLE' | 'SDK_TIMEOUT' | 'SDK_RESPONSE_TOO_LARGE'; message: string }

const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) }

export function call(
  method: 'POST' | 'PUT' | 'GET',
  url: URL,
  headers: Record<string, string>,
  body: string,
  limits: CallLimits,
): Promise<CallResult> {
  return new Promise((resolve) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const agent = url.protocol === 'https:' ? agents['https:'] : agents['http:']
    let settled = false
    const done = (result: CallResult) => {
      if (settled) return
      settled = true
      clearTimeout(connectTimer)
      clearTimeout(responseTimer)
      resolve(result)
    }
    const req = send(url, {
      method,
      agent,
      headers: { ...headers, 'content-length': Buffer.byteLength(body).toString() },
    })
    const fail = (code: 'SDK_UNREACHABLE' | 'SDK_TIMEOUT' | 'SDK_RESPONSE_TOO_LARGE', message: string) => {
      done({ ok: false, code, message })
      req.destroy()
    }
    const connectTimer = setTimeout(
      () => fail('SDK_TIMEOUT', `no connection to ${url.host} within ${limits.connectTimeoutMs} ms`),
      limits.connectTimeoutMs,
    )
    const responseTimer = setTimeout(
      () => fail('SDK_TIMEOUT', `${url.host} sent no whole answer within ${limits.responseTimeoutMs} ms`),
      limits.responseTimeoutMs,
    )
    req.on('socket', (socket) => {
      // A reused keep-alive socket is connected already.
      if (!socket.connecting) clearTimeout(connectTimer)
      else socket.once('connect', () => clearTimeout(connectTimer))
    })
    req.on('error', (err) =>
      fail('SDK_UNREACHABLE', `${url.host}: ${(err as NodeJS.ErrnoException).code ?? err.message}`),
    )
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > limits.maxResponseBytes)
          return fail('SDK_RESPONSE_TOO_LARGE', `the answer is over ${limits.maxResponseBytes} bytes`)
        chunks.push(chunk)
      })
      res.on('error', (err) => fail('SDK_UNREACHABLE', `${url.host}: ${err.message}`))
      res.on('end', () =>
        done({ ok: true, status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      )
    })
    req.end(body)
  })
}
