// The REST API (/v1) as the dashboard calls it: the signing key or an API token (kept for the tab's
// session only) goes in the Authorization header; without one, a signed-in user's session cookie goes
// by itself and the CSRF token beside it. Errors come back as {status, code, error}.
import { signal } from '@preact/signals'

export const signingKey = signal(sessionStorage.getItem('sluice.signingKey') ?? '')
signingKey.subscribe((key) => sessionStorage.setItem('sluice.signingKey', key))

/** The environment chosen in the header; '' shows every environment. */
export const currentEnv = signal(localStorage.getItem('sluice.env') ?? '')
currentEnv.subscribe((env) => localStorage.setItem('sluice.env', env))

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`)
  }
}

/**
 * A signed-in user's CSRF token (GET /v1/auth/me answers it to the session's cookie): sent with every
 * call, which a change made with the cookie needs. Kept in memory only; the cookie is HttpOnly.
 */
export const csrfToken = signal('')
/** Bumped by a sign-in or sign-out: every page loads again. */
export const authEpoch = signal(0)

export function authHeaders(): Record<string, string> {
  if (signingKey.value) return { authorization: `Bearer ${signingKey.value}` }
  return csrfToken.value ? { 'x-csrf-token': csrfToken.value } : {}
}

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers = { ...(body !== undefined && { 'content-type': 'application/json' }), ...authHeaders() }
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const payload = await response.json().catch(() => ({}))
  if (!response.ok)
    throw new ApiError(response.status, payload.code ?? String(response.status), payload.error ?? response.statusText)
  return payload as T
}

/** `?a=1&b=2` from the defined, non-empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== '')
  return entries.length ? `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)]))}` : ''
}

export interface StreamHandlers {
  onEvent(event: any): void
  onState(state: 'live' | 'reconnecting'): void
}

/**
 * Reads `GET /v1/events/stream` (Server-Sent Events) through fetch rather than EventSource, so the
 * signing key travels in the Authorization header as on every other call and never in a URL
 * (URLs end up in proxy logs and browser history). Reconnects after a dropped connection.
 */
export function streamEvents(path: string, handlers: StreamHandlers): () => void {
  const abort = new AbortController()
  const connect = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        const response = await fetch(path, { headers: authHeaders(), signal: abort.signal })
        if (!response.ok || !response.body) throw new Error(`stream: HTTP ${response.status}`)
        handlers.onState('live')
        let buffer = ''
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          buffer += chunk.value
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const message = parseSse(buffer.slice(0, end))
            buffer = buffer.slice(end + 2)
            if (message?.event === 'event') handlers.onEvent(JSON.parse(message.data))
          }
        }
      } catch {
        // Aborted (page left) or dropped (server restarting): try again shortly unless aborted.
      }
      if (abort.signal.aborted) return
      handlers.onState('reconnecting')
      await new Promise((resolve) => setTimeout(resolve, 2_000))
    }
  }
  void connect()
  return () => abort.abort()
}

function parseSse(block: string): { event: string; data: string } | null {
  let event = 'message'
  const data: string[] = []
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim()
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
  }
  return data.length ? { event, data: data.join('\n') } : null
}
