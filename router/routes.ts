// Which functions an event starts: its name (exact, or under a `prefix/*`, `*` for every name but
// Sluice's own `sluice/…` events) with the trigger's `if` filter; a cron tick starts its function
// only; an invocation (step.invoke) the invoked function only. A function starts once per event,
// whichever of its triggers match.
import { RESERVED_PREFIX, type EventRecord } from '../core/event.ts'
import { compileExpression, type Predicate } from '../core/expression.ts'
import type { FunctionDoc } from '../control/types.ts'
import { routingKey } from '../core/flow.ts'
import { keyOf } from '../core/flow-keys.ts'

interface Route {
  fn: FunctionDoc
  filter?: Predicate
}

export interface RouteIndex {
  functionsFor(event: EventRecord): FunctionDoc[]
}

export function routeIndex(docs: FunctionDoc[]): RouteIndex {
  const exact = new Map<string, Route[]>()
  const prefixes: Array<Route & { env: string; prefix: string }> = []
  const byKey = new Map<string, FunctionDoc>()
  for (const fn of docs) {
    byKey.set(`${fn.env}\0${fn.key}`, fn)
    for (const trigger of fn.triggers) {
      if (!('event' in trigger)) continue
      const compiled = trigger.if === undefined ? undefined : compileExpression(trigger.if, ['event'])
      const route: Route = { fn, ...(compiled?.ok && { filter: compiled.value }) }
      if (compiled && !compiled.ok) continue // refused when defined; a registration from elsewhere starts nothing
      if (trigger.event === '*') prefixes.push({ ...route, env: fn.env, prefix: '' })
      else if (trigger.event.endsWith('/*'))
        prefixes.push({ ...route, env: fn.env, prefix: trigger.event.slice(0, -1) })
      else {
        const key = `${fn.env}\0${trigger.event}`
        exact.get(key)?.push(route) ?? exact.set(key, [route])
      }
    }
  }
  return {
    functionsFor(event) {
      const { source } = event
      if (source.kind === 'invoke') return present(byKey.get(`${event.env}\0${source.target}`))
      if (source.kind === 'cron') {
        const fn = byKey.get(`${event.env}\0${source.functionId}`)
        return present(fn?.triggers.some((t) => 'cron' in t && t.cron === source.cron) ? fn : undefined)
      }
      const candidates = [...(exact.get(`${event.env}\0${event.name}`) ?? [])]
      for (const route of prefixes)
        if (route.env === event.env && event.name.startsWith(route.prefix) && (route.prefix !== '' || !reserved(event)))
          candidates.push(route)
      if (candidates.length === 0) return []
      const started = new Set<FunctionDoc>()
      let bindings: { event: unknown } | undefined
      for (const { fn, filter } of candidates) {
        if (started.has(fn)) continue
        if (filter) {
          bindings ??= { event: asTrigger(event) }
          if (!filter(bindings)) continue
        }
        started.add(fn)
      }
      return [...started]
    },
  }
}

const reserved = (event: EventRecord) => event.name.startsWith(RESERVED_PREFIX)
const present = (fn: FunctionDoc | undefined) => (fn ? [fn] : [])

/** An event as expressions see it. */
export function asTrigger(e: EventRecord) {
  return { internalId: e.internalId, id: e.id, name: e.name, data: e.data, ts: e.ts, env: e.env }
}

/**
 * The key a function's run is routed by (core/flow.ts `routingKey`): every run with the same flow
 * key lands on one partition of the function's topic, whose runner applies the limits; undefined
 * without flow control (runs spread by run ID).
 */
export function routeKeyOf(fn: FunctionDoc, event: EventRecord): string | undefined {
  const expression = routingKey(fn.flow)
  if (expression === undefined) return undefined
  return expression === null ? 'all' : keyOf(expression, event)
}
