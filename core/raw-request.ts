// A webhook request exactly as ingest captured it, before any transform ran. It travels on
// the `raw` topic and is kept with the request's outcome, so a request that a broken
// transform could not turn into an event can still be replayed later.
export interface RawWebhookRequest {
  /** ULID assigned at ingest; the events it yields take their IDs from it. */
  requestId: string
  webhookId: string
  /** 1 on first delivery; each replay publishes the same request with the next attempt. */
  attempt: number
  receivedAt: number
  /** The client's address: the socket's, or the one a trusted proxy reported. */
  ip: string
  /** Canonical header names (`X-Github-Event`). */
  headers: Record<string, string>
  /** Query values are always arrays. */
  query: Record<string, string[]>
  /** The body as sent: UTF-8 text, or base64 when the bytes are not valid UTF-8. */
  body: string
  bodyEncoding: 'utf8' | 'base64'
  /**
   * Not a request: a paused webhook's resume, sent down `raw` behind its requests so the transformer
   * releases the held ones in order (transformer/ARCHITECTURE.md, "Pausing"). Never stored.
   */
  resumeMarker?: true
}

/** The body's exact bytes, as signatures are computed over them. */
export function rawBodyBytes(request: Pick<RawWebhookRequest, 'body' | 'bodyEncoding'>): Buffer {
  return Buffer.from(request.body, request.bodyEncoding === 'base64' ? 'base64' : 'utf8')
}

/** The body as text for `transform(…, raw)`: undecodable bytes become U+FFFD. */
export function rawBodyText(request: Pick<RawWebhookRequest, 'body' | 'bodyEncoding'>): string {
  return request.bodyEncoding === 'base64' ? rawBodyBytes(request).toString('utf8') : request.body
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Encodes captured bytes so that `rawBodyBytes` gives them back unchanged. */
export function encodeRawBody(bytes: Buffer): Pick<RawWebhookRequest, 'body' | 'bodyEncoding'> {
  try {
    return { body: strictUtf8.decode(bytes), bodyEncoding: 'utf8' }
  } catch {
    return { body: bytes.toString('base64'), bodyEncoding: 'base64' }
  }
}

/** Case-insensitive header lookup over canonical names. */
export function headerOf(headers: Record<string, string>, name: string): string | undefined {
  const wanted = name.toLowerCase()
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value
  return undefined
}
