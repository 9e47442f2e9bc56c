// Reads a request body up to a limit known before the first byte: a declared Content-Length
// over it is refused unread, and a chunked body is cut as soon as it passes it, so an
// unauthenticated or oversized stream costs at most `maxBytes` of memory. Callback-style, as
// fastify takes a content parser: a promise would cost each request another turn of the microtask queue.
import type { IncomingMessage } from 'node:http'
import { SluiceError } from '../core/errors.ts'

export function readBody(
  payload: IncomingMessage,
  maxBytes: number,
  whose: () => string,
  callback: (err: Error | null, body?: Buffer) => void,
): void {
  const tooLarge = (bytes: string) =>
    new SluiceError('BODY_TOO_LARGE', `body: ${bytes} bytes, the limit for ${whose()} is ${maxBytes}`)
  const declared = Number(payload.headers['content-length'])
  if (declared > maxBytes) {
    callback(tooLarge(String(declared)))
    return
  }
  const chunks: Buffer[] = []
  let received = 0
  const done = (err?: Error) => {
    payload.off('data', onData)
    payload.off('end', onEnd)
    payload.off('error', onEnded)
    payload.off('close', onEnded)
    if (err) callback(err)
    else callback(null, Buffer.concat(chunks, received))
  }
  const onData = (chunk: Buffer) => {
    received += chunk.length
    if (received > maxBytes) {
      // Stop reading; the error answer closes the connection (api/http.ts).
      payload.pause()
      done(tooLarge(`over ${maxBytes}`))
      return
    }
    chunks.push(chunk)
  }
  const onEnd = () => done()
  // The sender went away mid-body: nobody is left to answer, and nothing was accepted.
  const onEnded = () => done(new SluiceError('REQUEST_INVALID', 'body: the connection closed before the body ended'))
  payload.on('data', onData)
  payload.on('end', onEnd)
  payload.on('error', onEnded)
  payload.on('close', onEnded)
}
