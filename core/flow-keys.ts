// The keys a run's flow control is applied by, evaluated once on its triggering event: its
// concurrency slots, and the keys of its throttle, rate limit, debounce, batch, idempotency and
// singleton, and its priority. An expression that fails on the event (a missing field) gives the
// null key: such events share one bucket.
import type { EventRecord } from './event.ts'
import { compileValue } from './expression.ts'
import type { FlowControl } from './flow.ts'

export interface FlowKeys {
  /** One per concurrency limit: `<scope id>\0<value>`, with the limit. `env` scope is shared across functions. */
  slots: Array<{ id: string; limit: number }>
  throttle?: string
  rateLimit?: string
  debounce?: string
  batch?: string
  idempotency?: string
  singleton?: string
  /** Head start in milliseconds (priority.run, −600 to 600 s). */
  priorityMs: number
}

const NULL_KEY = 'null'

/** The key an expression gives for `event` (its JSON), or the shared null key. */
export function keyOf(expression: string | undefined, event: EventRecord): string {
  if (expression === undefined) return ''
  const compiled = compileValue(expression, ['event'])
  if (!compiled.ok) return NULL_KEY
  const value = compiled.value({ event: asBinding(event) })
  return value === null ? NULL_KEY : JSON.stringify(value)
}

export function flowKeys(flow: FlowControl, fn: { env: string; key: string }, event: EventRecord): FlowKeys {
  const slots = (flow.concurrency ?? []).map((c, i) => ({
    id: c.scope === 'env' ? `env\0${fn.env}\0${c.key}\0${keyOf(c.key, event)}` : `fn${i}\0${keyOf(c.key, event)}`,
    limit: c.limit,
  }))
  let priorityMs = 0
  if (flow.priority) {
    const compiled = compileValue(flow.priority.run, ['event'])
    const seconds = compiled.ok ? compiled.value({ event: asBinding(event) }) : null
    if (typeof seconds === 'number' && Number.isFinite(seconds))
      priorityMs = Math.round(Math.max(-600, Math.min(600, seconds)) * 1000)
  }
  return {
    slots,
    ...(flow.throttle && { throttle: keyOf(flow.throttle.key, event) }),
    ...(flow.rateLimit && { rateLimit: keyOf(flow.rateLimit.key, event) }),
    ...(flow.debounce && { debounce: keyOf(flow.debounce.key, event) }),
    ...(flow.batchEvents && { batch: keyOf(flow.batchEvents.key, event) }),
    ...(flow.idempotency !== undefined && { idempotency: keyOf(flow.idempotency, event) }),
    ...(flow.singleton && { singleton: keyOf(flow.singleton.key, event) }),
    priorityMs,
  }
}

/** An event as expressions see it. */
export function asBinding(e: EventRecord) {
  return { internalId: e.internalId, id: e.id, name: e.name, data: e.data, ts: e.ts, env: e.env }
}
