// One webhook request → events: parse the body, run the transform (or the default), validate
// the output like any event, apply the event-name allow/deny lists. Shared by the stage and
// by preview, so a preview shows exactly what delivery would do. Outcomes are values.
import { eventProblem, isPlainObject, jsonDepth, type EventInput, type EventLimits } from '../core/event.ts'
import type { ErrorCode } from '../core/errors.ts'
import { headerOf } from '../core/raw-request.ts'
import { jsonProblem } from '../core/json-problem.ts'
import type { WebhookDoc } from '../control/types.ts'
import type { Webhooks } from '../control/webhooks.ts'
import type { RequestError } from '../store/requests-types.ts'
import type { Sandbox, TransformInput } from './sandbox-types.ts'

export type PipelineResult = { kind: 'ok'; events: EventInput[] } | { kind: 'deadLetter'; error: RequestError }

export interface PipelineRequest {
  text: string
  headers: Record<string, string>
  query: Record<string, string[]>
}
export interface PipelineDeps {
  sandbox: Sandbox
  webhooks: Pick<Webhooks, 'nameRules'>
}
export type PipelineLimits = EventLimits

const deadLetter = (code: ErrorCode | string, message: string): PipelineResult => ({
  kind: 'deadLetter',
  error: { code, message },
})

export async function runPipeline(
  deps: PipelineDeps,
  webhook: WebhookDoc,
  request: PipelineRequest,
  limits: PipelineLimits,
  transform = webhook.transform,
  sourceKey = `${webhook.id}@${webhook.transformVersion}`,
): Promise<PipelineResult> {
  const parsed = parseBody(request.text, headerOf(request.headers, 'content-type'))
  if (!parsed.ok) return deadLetter('JSON_INVALID', parsed.message)
  if (jsonDepth(parsed.body) > limits.maxJsonDepth)
    return deadLetter('JSON_TOO_DEEP', `body: nests deeper than ${limits.maxJsonDepth} levels`)
  let output: unknown
  if (transform === undefined) {
    output = defaultEvent(webhook, parsed)
  } else {
    const input: TransformInput = {
      body: parsed.body,
      headers: request.headers,
      query: request.query,
      raw: request.text,
    }
    const result = await deps.sandbox.run(sourceKey, transform, input)
    if (result.kind === 'error') return deadLetter(result.code, result.message)
    output = result.value
  }
  const items = Array.isArray(output) ? output : [output]
  if (items.length === 0)
    return deadLetter(
      'TRANSFORM_INVALID_EVENT',
      'the transform returned an empty array: return an event {name, data, id?, ts?} or an array of them',
    )
  if (items.length > limits.maxEvents)
    return deadLetter(
      'TRANSFORM_INVALID_EVENT',
      `the transform returned ${items.length} events, the limit is ${limits.maxEvents}`,
    )
  for (let i = 0; i < items.length; i++) {
    const problem = eventProblem(items[i], limits)
    const where = Array.isArray(output) ? `events[${i}]` : 'event'
    if (problem) return deadLetter('TRANSFORM_INVALID_EVENT', `${where}${problem}`)
  }
  if (jsonDepth(output) > limits.maxJsonDepth)
    return deadLetter('TRANSFORM_INVALID_EVENT', `event: nests deeper than ${limits.maxJsonDepth} levels`)
  const events = items as EventInput[]
  const rules = deps.webhooks.nameRules(webhook)
  for (const event of events) {
    const refusal = rules.refusal(event.name)
    if (refusal) return deadLetter('EVENT_NAME_DENIED', refusal)
  }
  return { kind: 'ok', events }
}

/** `text`: the body was not JSON (nor a form) and `body` is that text. */
type ParsedBody = { ok: true; body: unknown; text?: true } | { ok: false; message: string }

/**
 * What the transform gets as `evt`: JSON bodies of any shape parsed; form-encoded bodies as
 * an object (a repeated field becomes an array); an empty body as `{}`; any other text as the
 * string itself. A body that declares JSON but is not JSON is dead-lettered, not guessed at.
 */
export function parseBody(text: string, contentType: string | undefined): ParsedBody {
  const type = contentType?.split(';')[0].trim().toLowerCase() ?? ''
  if (type === 'application/x-www-form-urlencoded') return { ok: true, body: formObject(text) }
  if (text.trim() === '') return { ok: true, body: {} }
  const declaredJson = type === 'application/json' || type.endsWith('+json')
  try {
    return { ok: true, body: JSON.parse(text) }
  } catch (err) {
    if (declaredJson)
      return { ok: false, message: `body: Content-Type says JSON but it is not valid JSON (${jsonProblem(err)})` }
    return { ok: true, body: text, text: true }
  }
}

function formObject(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [key, value] of new URLSearchParams(text)) {
    const seen = out[key]
    out[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
  }
  return out
}

/**
 * With no transform: `webhook/<webhook name as a slug>.received`, data = the body when it is a
 * JSON object or form, `{body}` for other JSON (arrays, scalars), `{raw}` for text that is not JSON.
 */
export function defaultEvent(webhook: Pick<WebhookDoc, 'name'>, parsed: { body: unknown; text?: true }): EventInput {
  const { body } = parsed
  const data = parsed.text ? { raw: body } : isPlainObject(body) ? body : { body }
  return { name: `webhook/${slug(webhook.name)}.received`, data }
}

export function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 64) || 'webhook'
  )
}
