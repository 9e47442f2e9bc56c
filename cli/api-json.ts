// How control commands call the REST API, and a call whose answer the command reads itself
// (drafts, types) rather than printing it.
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'

export type Target = { url: string; signingKey?: string }
export type Answer = { ok: true; body: unknown } | { ok: false; text: string }

export async function callJson(
  target: Target,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  let response: { ok: boolean; text: string }
  try {
    response = await send(
      new URL(target.url + path),
      method,
      {
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(target.signingKey && { authorization: `Bearer ${target.signingKey}` }),
        ...headers,
      },
      body === undefined ? undefined : JSON.stringify(body),
    )
  } catch (err) {
    const reason = (err as Error).message
    return {
      ok: false,
      text: `cannot reach Sluice at ${target.url}: ${reason}. Is it running (npm start)? Set --url or SLUICE_URL.`,
    }
  }
  if (!response.ok) return { ok: false, text: response.text }
  return { ok: true, body: JSON.parse(response.text) }
}

/** node:http rather than fetch, which loads undici: ~0.1 s of CPU on every command's start. */
export function send(url: URL, method: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ ok: boolean; text: string }>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () => {
        const status = res.statusCode ?? 0
        resolve({ ok: status >= 200 && status < 300, text: Buffer.concat(chunks).toString('utf8') })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}
