// Webhook test helpers over real HTTP: create a webhook, post to its URL as a provider
// would, and wait for the transformer's recorded outcome.
import { createHmac } from 'node:crypto'
import { eventually, getJson, postJson } from '../helpers/server.ts'

export interface Webhook {
  id: string
  url: string
  name: string
  env: string
  [field: string]: unknown
}

export async function createWebhook(baseUrl: string, body: Record<string, unknown>): Promise<Webhook> {
  const created = await postJson(`${baseUrl}/v1/webhooks`, body)
  if (created.status !== 201)
    throw new Error(`creating a webhook failed: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body.data
}

export async function patchWebhook(
  baseUrl: string,
  id: string,
  body: Record<string, unknown>,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}/v1/webhooks/${id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: await response.json() }
}

/** Posts a body exactly as given (string or JSON), as a provider would. */
export async function deliver(
  url: string,
  body: string | unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: text,
  })
  const responseText = await response.text()
  let parsed: unknown = responseText
  try {
    parsed = JSON.parse(responseText)
  } catch {
    /* keep text */
  }
  return { status: response.status, body: parsed }
}

/** The recorded outcome of a request, once the transformer has processed it (optionally: a later attempt). */
export async function outcome(baseUrl: string, webhookId: string, requestId: string, minAttempt = 1): Promise<any> {
  return eventually(async () => {
    const r = await getJson(`${baseUrl}/v1/webhooks/${webhookId}/requests/${requestId}`)
    return r.status === 200 && r.body.data.attempt >= minAttempt ? r.body.data : undefined
  })
}

/** The stored events a delivered request produced, in order. */
export async function storedEvents(baseUrl: string, eventIds: string[]): Promise<any[]> {
  return Promise.all(
    eventIds.map((id) =>
      eventually(async () => {
        const r = await getJson(`${baseUrl}/v1/events/${id}`)
        return r.status === 200 ? r.body.data : undefined
      }),
    ),
  )
}

export const hmacHex = (secret: string, payload: string) => createHmac('sha256', secret).update(payload).digest('hex')
export const hmacBase64 = (secret: string, payload: string) =>
  createHmac('sha256', secret).update(payload).digest('base64')
