// HTTP/1.1 over a bare socket, for what fetch will not send: lying lengths, endless chunked
// bodies, bytes trickled slowly, malformed request lines.
import { connect, type Socket } from 'node:net'

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
  json: any
}

export interface RawConnection {
  socket: Socket
  /** Resolves with the first response on the connection (or rejects when it closes without one). */
  response: Promise<RawResponse>
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>
  write(data: string | Buffer): boolean
  /** Every byte the server sent so far. */
  received(): Buffer
}

export function rawConnect(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      let received = Buffer.alloc(0)
      const closed = new Promise<void>((done) => socket.once('close', () => done()))
      const response = new Promise<RawResponse>((done, fail) => {
        const tryParse = () => {
          const parsed = parseResponse(received)
          if (parsed) done(parsed)
          return parsed
        }
        socket.on('data', (chunk) => {
          received = Buffer.concat([received, chunk])
          tryParse()
        })
        socket.once(
          'close',
          () =>
            tryParse() ??
            fail(
              new Error(`closed without a response (${received.length} bytes: ${received.toString().slice(0, 80)})`),
            ),
        )
      })
      response.catch(() => {}) // observed by whoever awaits it
      // Writes after the server closed fail with EPIPE/ECONNRESET: expected in these tests.
      socket.on('error', () => {})
      resolve({
        socket,
        response,
        closed,
        write: (data) => !socket.destroyed && socket.write(data),
        received: () => received,
      })
    })
    socket.once('error', reject)
  })
}

/** One request's bytes in, its first response out. */
export async function rawRequest(url: string, bytes: string | Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  const connection = await rawConnect(url)
  connection.write(bytes)
  try {
    return await withTimeout(connection.response, timeoutMs, 'response')
  } finally {
    connection.socket.destroy()
  }
}

export function parseResponse(bytes: Buffer): RawResponse | undefined {
  const headerEnd = bytes.indexOf('\r\n\r\n')
  if (headerEnd < 0) return undefined
  const [statusLine, ...lines] = bytes.subarray(0, headerEnd).toString('latin1').split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  const length = Number(headers['content-length'] ?? 0)
  if (bytes.length < headerEnd + 4 + length) return undefined
  const body = bytes.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8')
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    json = undefined
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body, json }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
