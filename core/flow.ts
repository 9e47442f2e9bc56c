// Flow control of a function's runs (Inngest's option shapes): how many execute at once, how fast they
// start, which events start none, and how events are gathered into runs. Checked when the function is
// defined; `FlowControl` is what the router and the runner apply (durations in milliseconds).
import { parseDuration, type Duration } from './duration.ts'
import { compileExpression, compileValue } from './expression.ts'

export interface FlowControl {
  concurrency?: Array<{ limit: number; key?: string; scope: 'fn' | 'env' }>
  throttle?: { limit: number; periodMs: number; burst: number; key?: string }
  rateLimit?: { limit: number; periodMs: number; key?: string }
  debounce?: { periodMs: number; key?: string; timeoutMs?: number }
  batchEvents?: { maxSize: number; timeoutMs: number; key?: string; if?: string }
  priority?: { run: string }
  idempotency?: string
  singleton?: { key?: string; mode: 'skip' | 'cancel' }
}

export const FLOW_LIMITS = {
  concurrency: 10_000,
  throttle: 10_000,
  rateLimit: 10_000,
  batchMaxSize: 1_000,
  periodMinMs: 1_000,
  throttlePeriodMaxMs: 7 * 86_400_000,
  rateLimitPeriodMaxMs: 86_400_000,
  debounceMaxMs: 7 * 86_400_000,
  batchTimeoutMaxMs: 3_600_000,
  prioritySeconds: 600,
} as const

const FLOW_KEYS = [
  'concurrency',
  'throttle',
  'rateLimit',
  'debounce',
  'batchEvents',
  'priority',
  'idempotency',
  'singleton',
] as const

/** The flow options of a function as written (client/flow.ts `FlowOptions`), not checked yet. */
export type FlowInput = { [K in (typeof FLOW_KEYS)[number]]?: unknown }

/** Reports a bad option (`what`: its path, `throttle.period`) and does not return. */
export type FlowFail = (what: string, message: string) => never

/** The flow control of `options`, or undefined when it has none; `fail` is called for the first bad option. */
export function parseFlow(options: FlowInput, fail: FlowFail): FlowControl | undefined {
  const flow: FlowControl = {}
  const int = (what: string, value: unknown, min: number, max: number): number => {
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max)
      fail(what, `must be an integer from ${min} to ${max}`)
    return value as number
  }
  const duration = (what: string, value: unknown, minMs: number, maxMs: number): number => {
    const parsed = parseDuration(value)
    if (!parsed.ok) return fail(what, parsed.message)
    if (parsed.value < minMs || parsed.value > maxMs) fail(what, `must be from ${minMs / 1000} s to ${maxMs / 1000} s`)
    return parsed.value
  }
  const key = (what: string, value: unknown): string | undefined => {
    if (value === undefined) return undefined
    const compiled = compileValue(value, ['event'])
    if (!compiled.ok) fail(what, compiled.message)
    return value as string
  }
  const object = (what: string, value: unknown): Record<string, unknown> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(what, 'must be an object')
    return value as Record<string, unknown>
  }

  if (options.concurrency !== undefined) {
    const given = options.concurrency
    const list: unknown[] = Array.isArray(given) ? given : [typeof given === 'number' ? { limit: given } : given]
    if (list.length === 0 || list.length > 2) fail('concurrency', 'at most two limits')
    flow.concurrency = list.map((c, i) => {
      const where = Array.isArray(given) ? `concurrency[${i}]` : 'concurrency'
      const o = typeof c === 'number' ? { limit: c } : object(where, c)
      const scope = o.scope ?? 'fn'
      if (scope !== 'fn' && scope !== 'env') fail(`${where}.scope`, 'must be "fn" or "env"')
      if (scope === 'env' && o.key === undefined) fail(`${where}.key`, 'an env-scoped limit needs a key')
      return {
        limit: int(`${where}.limit`, o.limit, 1, FLOW_LIMITS.concurrency),
        ...(o.key !== undefined && { key: key(`${where}.key`, o.key) }),
        scope: scope as 'fn' | 'env',
      }
    })
  }
  if (options.throttle !== undefined) {
    const o = object('throttle', options.throttle)
    const limit = int('throttle.limit', o.limit, 1, FLOW_LIMITS.throttle)
    flow.throttle = {
      limit,
      periodMs: duration('throttle.period', o.period, FLOW_LIMITS.periodMinMs, FLOW_LIMITS.throttlePeriodMaxMs),
      burst: o.burst === undefined ? 1 : int('throttle.burst', o.burst, 1, FLOW_LIMITS.throttle),
      ...(o.key !== undefined && { key: key('throttle.key', o.key) }),
    }
  }
  if (options.rateLimit !== undefined) {
    const o = object('rateLimit', options.rateLimit)
    flow.rateLimit = {
      limit: int('rateLimit.limit', o.limit, 1, FLOW_LIMITS.rateLimit),
      periodMs: duration('rateLimit.period', o.period, FLOW_LIMITS.periodMinMs, FLOW_LIMITS.rateLimitPeriodMaxMs),
      ...(o.key !== undefined && { key: key('rateLimit.key', o.key) }),
    }
  }
  if (options.debounce !== undefined) {
    const o = object('debounce', options.debounce)
    const periodMs = duration('debounce.period', o.period, FLOW_LIMITS.periodMinMs, FLOW_LIMITS.debounceMaxMs)
    const timeoutMs =
      o.timeout === undefined ? undefined : duration('debounce.timeout', o.timeout, periodMs, FLOW_LIMITS.debounceMaxMs)
    flow.debounce = {
      periodMs,
      ...(o.key !== undefined && { key: key('debounce.key', o.key) }),
      ...(timeoutMs !== undefined && { timeoutMs }),
    }
  }
  if (options.batchEvents !== undefined) {
    const o = object('batchEvents', options.batchEvents)
    const filter = o.if
    if (filter !== undefined) {
      const compiled = compileExpression(filter, ['event'])
      if (!compiled.ok) fail('batchEvents.if', compiled.message)
    }
    flow.batchEvents = {
      maxSize: int('batchEvents.maxSize', o.maxSize, 1, FLOW_LIMITS.batchMaxSize),
      timeoutMs: duration('batchEvents.timeout', o.timeout, FLOW_LIMITS.periodMinMs, FLOW_LIMITS.batchTimeoutMaxMs),
      ...(o.key !== undefined && { key: key('batchEvents.key', o.key) }),
      ...(filter !== undefined && { if: filter as string }),
    }
  }
  if (options.priority !== undefined) {
    const o = object('priority', options.priority)
    const compiled = compileValue(o.run, ['event'])
    if (!compiled.ok) fail('priority.run', compiled.message)
    flow.priority = { run: o.run as string }
  }
  if (options.idempotency !== undefined) flow.idempotency = key('idempotency', options.idempotency)
  if (options.singleton !== undefined) {
    const o = object('singleton', options.singleton)
    if (o.mode !== 'skip' && o.mode !== 'cancel') fail('singleton.mode', 'must be "skip" or "cancel"')
    flow.singleton = {
      mode: o.mode as 'skip' | 'cancel',
      ...(o.key !== undefined && { key: key('singleton.key', o.key) }),
    }
  }
  // A batch run has many events, a debounced one the last: per-event options do not apply to them.
  for (const [a, b] of [
    ['batchEvents', 'debounce'],
    ['batchEvents', 'rateLimit'],
    ['batchEvents', 'idempotency'],
    ['batchEvents', 'singleton'],
    ['debounce', 'idempotency'],
  ] as const)
    if (flow[a] !== undefined && flow[b] !== undefined) fail(b, `cannot be combined with ${a}`)
  return FLOW_KEYS.some((k) => flow[k] !== undefined) ? flow : undefined
}

/**
 * The expression a function's runs are routed by: all runs with the same value go to one partition of
 * the function's topic, whose owner applies the limits. One expression: that of the options that keep
 * state per key, when they agree; none (a constant) when they differ or one has no key, so that a
 * single owner sees every run. Undefined without such options: runs spread by run ID. An `env`-scoped
 * limit counts too: a value's runs take the same partition number on every function's topic, and
 * one consumer group with range assignment hands that number of all of them to one runner
 * (runner/consumer-groups.ts).
 */
export function routingKey(flow: FlowControl | undefined): string | null | undefined {
  if (!flow) return undefined
  const keyed = [
    ...(flow.concurrency ?? []),
    flow.throttle,
    flow.rateLimit,
    flow.debounce,
    flow.batchEvents,
    flow.idempotency === undefined ? undefined : { key: flow.idempotency },
    flow.singleton,
  ].filter((o) => o !== undefined) as Array<{ key?: string }>
  if (keyed.length === 0) return undefined
  const keys = new Set(keyed.map((o) => o.key ?? ''))
  return keys.size === 1 && !keys.has('') ? [...keys][0] : null
}
