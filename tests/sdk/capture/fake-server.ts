// A recording stand-in for the Inngest server, used ONLY to capture what the real SDKs send and answer
// (tests/sdk/capture/capture.ts writes tests/sdk/fixtures). It is not a test of Sluice: Sluice's own tests
// drive the same apps through the real server.
import { createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'

export interface Recorded {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: unknown
}

export interface FakeServer {
  url: string
  requests: Recorded[]
  close(): Promise<void>
}

/** Answers /fn/register as Inngest does (`{ok, modified}`) and the Event API (`{ids, status}`). */
export async function startFakeServer(): Promise<FakeServer> {
  const requests: Recorded[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body: unknown = text
      try {
        body = text === '' ? null : JSON.parse(text)
      } catch {}
      const path = req.url ?? '/'
      requests.push({ method: req.method ?? '', path, headers: req.headers, body })
      res.setHeader('content-type', 'application/json')
      if (path.startsWith('/e/')) {
        const count = Array.isArray(body) ? body.length : 1
        res.end(JSON.stringify({ ids: Array.from({ length: count }, (_, i) => `01CAPTUREDEVENT${i}`), status: 200 }))
      } else res.end(JSON.stringify({ ok: true, modified: true }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

/** The key as the SDKs use it for HMAC: `signkey-<env>-` removed, the rest taken as UTF-8 bytes (not hex-decoded). */
export function hmacKey(signingKey: string): string {
  return signingKey.replace(/^signkey-\w+-/, '')
}

/** `t=<unix seconds>&s=<hex HMAC-SHA256(key, body + t)>`, as Inngest signs requests to apps. */
export function sign(body: string, signingKey: string, ts = Math.floor(Date.now() / 1000)): string {
  const s = createHmac('sha256', hmacKey(signingKey)).update(body).update(String(ts)).digest('hex')
  return `t=${ts}&s=${s}`
}

/** Checks an app's answer signature over the raw answer body; returns why not, or undefined. */
export function checkSignature(header: string | undefined, body: string, signingKey: string): string | undefined {
  if (!header) return 'no X-Inngest-Signature'
  const params = new URLSearchParams(header)
  const ts = Number(params.get('t'))
  if (sign(body, signingKey, ts) === header) return undefined
  // inngestgo signs json.Marshal's bytes, then writes them with json.Encoder, which adds a newline.
  if (body.endsWith('\n') && sign(body.slice(0, -1), signingKey, ts) === header)
    return 'valid without the trailing newline'
  return 'signature mismatch'
}

// canonicalize is CommonJS whose types declare no default call signature under nodenext.
const canonicalize = createRequire(import.meta.url)('canonicalize') as (value: unknown) => string
export const jcs = (value: unknown): string => canonicalize(value)

export interface Answer {
  status: number
  headers: Record<string, string>
  text: string
  body: unknown
}

/** Calls the app with a JCS body, signed when a key is given. */
export async function callApp(
  url: string,
  init: { method: string; body?: unknown; headers?: Record<string, string>; signingKey?: string },
): Promise<Answer> {
  const text = init.body === undefined ? undefined : jcs(init.body)
  const headers: Record<string, string> = { ...init.headers }
  if (text !== undefined) headers['content-type'] = 'application/json'
  if (init.signingKey) headers['x-inngest-signature'] = sign(text ?? '', init.signingKey)
  const res = await fetch(url, { method: init.method, headers, body: text })
  const answer = await res.text()
  let body: unknown = answer
  try {
    body = JSON.parse(answer)
  } catch {}
  return { status: res.status, headers: Object.fromEntries(res.headers.entries()), text: answer, body }
}
