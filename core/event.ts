// The event as it travels between stages and as it is stored.
export type EventSource =
  | { kind: 'api'; keyId?: string }
  | { kind: 'webhook'; webhookId: string; requestId: string }
  | { kind: 'function'; functionId: string; runId: string; stepId: string }
  /** A copy sent by POST /v1/events/<id>/replay, so the event's functions run again. */
  | { kind: 'replay'; eventId: string }
  /** Sent by step.invoke: it runs function `target` only, and its end resumes the caller's record `seq`. */
  | {
      kind: 'invoke'
      functionId: string
      runId: string
      stepId: string
      seq: number
      target: string
      /** The caller's route key (flow control), when it has one. */
      routeKey?: string
    }
  /** A tick of function `functionId`'s cron schedule: it runs that function only. */
  | { kind: 'cron'; functionId: string; cron: string }

export interface EventRecord {
  internalId: string
  /** Dedup key: the caller's `id`, or the internal ID when none was given. */
  id: string
  name: string
  data: Record<string, unknown>
  ts: number
  env: string
  receivedAt: number
  source: EventSource
  /** warn mode: what broke the name's schema (`data/<pointer>: <rule>`), checked at ingest. */
  schemaViolations?: string[]
}

export interface StoredEvent extends EventRecord {
  /** Set on an event dropped by dedup: the internal ID of the event it duplicates. */
  duplicateOf?: string
}

export interface EventInput {
  name: string
  data: Record<string, unknown>
  id?: string
  ts?: number
}

/**
 * Accepted inputs as records on `incoming`. The dedup key is the caller's `id`, else the
 * matching `dedupIds` entry (the internal ID unless a producer keeps keys stable across attempts).
 */
export function toEventRecords(
  events: EventInput[],
  at: { internalIds: string[]; dedupIds?: string[]; env: string; receivedAt: number; source: EventSource },
): EventRecord[] {
  const dedupIds = at.dedupIds ?? at.internalIds
  return events.map((e, i) => ({
    internalId: at.internalIds[i],
    id: e.id ?? dedupIds[i],
    name: e.name,
    data: e.data,
    ts: e.ts ?? at.receivedAt,
    env: at.env,
    receivedAt: at.receivedAt,
    source: at.source,
  }))
}

export interface EventLimits {
  maxEvents: number
  maxJsonDepth: number
  maxNameLength: number
  maxIdLength: number
}

export const RESERVED_PREFIX = 'sluice/'
/** The largest time in ms a JavaScript Date (and so every reader of `ts`) can represent. */
export const MAX_DATE_MS = 8.64e15
const FIELDS = new Set(['name', 'data', 'id', 'ts'])

export type Validation =
  | { ok: true; events: EventInput[] }
  | { ok: false; code: 'EVENT_INVALID' | 'TOO_MANY_EVENTS' | 'JSON_TOO_DEEP'; message: string }

/** Validates an Event API body (one event or an array); the whole batch fails on the first bad event. */
export function validateEventBody(body: unknown, limits: EventLimits): Validation {
  const items = Array.isArray(body) ? body : [body]
  if (items.length === 0) return { ok: false, code: 'EVENT_INVALID', message: 'events: the array is empty' }
  if (items.length > limits.maxEvents)
    return {
      ok: false,
      code: 'TOO_MANY_EVENTS',
      message: `events: ${items.length} events, the limit is ${limits.maxEvents}`,
    }
  if (jsonDepth(body) > limits.maxJsonDepth)
    return { ok: false, code: 'JSON_TOO_DEEP', message: `body: nests deeper than ${limits.maxJsonDepth} levels` }
  for (let i = 0; i < items.length; i++) {
    const problem = eventProblem(items[i], limits)
    if (problem) return { ok: false, code: 'EVENT_INVALID', message: `events[${i}]${problem}` }
  }
  return { ok: true, events: items as EventInput[] }
}

/** One event's first problem as `.<field>: <what is wrong>`, or undefined when it is valid. */
export function eventProblem(
  event: unknown,
  limits: Pick<EventLimits, 'maxNameLength' | 'maxIdLength'>,
  allowReserved = false,
): string | undefined {
  if (!isPlainObject(event)) return ': must be a JSON object with name and data'
  for (const key in event)
    if (Object.hasOwn(event, key) && !FIELDS.has(key)) return `.${key}: unknown field (allowed: name, data, id, ts)`
  const { name, data, id, ts } = event
  if (typeof name !== 'string' || name.length === 0) return '.name: must be a non-empty string'
  if (name.length > limits.maxNameLength) return `.name: longer than ${limits.maxNameLength} characters`
  // A lone surrogate has no UTF-8 form: stored or hashed, it becomes U+FFFD, the same as another.
  if (!name.isWellFormed()) return '.name: not well-formed Unicode (a lone surrogate such as \\ud800)'
  if (!allowReserved && name.startsWith(RESERVED_PREFIX)) return `.name: the prefix "${RESERVED_PREFIX}" is reserved`
  if (!isPlainObject(data)) return '.data: must be a JSON object'
  if (id !== undefined && (typeof id !== 'string' || id.length === 0))
    return '.id: must be a non-empty string when given'
  if (typeof id === 'string' && id.length > limits.maxIdLength)
    return `.id: longer than ${limits.maxIdLength} characters`
  if (typeof id === 'string' && !id.isWellFormed())
    return '.id: not well-formed Unicode (a lone surrogate such as \\ud800)'
  if (ts !== undefined && (!Number.isSafeInteger(ts) || (ts as number) < 0))
    return '.ts: must be a non-negative integer of milliseconds'
  if ((ts as number) > MAX_DATE_MS) return `.ts: after the last time a Date holds (${MAX_DATE_MS} ms, year 275760)`
  return undefined
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Depth of a parsed JSON value without recursion, so a hostile body cannot blow the stack. Two
 * parallel stacks and no per-node arrays: it runs over every value of every accepted event.
 */
export function jsonDepth(value: unknown): number {
  let max = 0
  const nodes: unknown[] = [value]
  const depths: number[] = [1]
  const push = (child: unknown, depth: number) => {
    if (typeof child === 'object' && child !== null) {
      nodes.push(child)
      depths.push(depth)
    }
  }
  while (nodes.length > 0) {
    const node = nodes.pop()
    const depth = depths.pop()!
    if (typeof node !== 'object' || node === null) continue
    if (depth > max) max = depth
    if (Array.isArray(node)) {
      for (const child of node) push(child, depth + 1)
      continue
    }
    for (const key in node) if (Object.hasOwn(node, key)) push((node as Record<string, unknown>)[key], depth + 1)
  }
  return max
}
