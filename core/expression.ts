// Expressions over events, in CEL (cel.dev) as Inngest writes them: `if` filters of triggers, waits
// and cancellations (`async.data.userId == event.data.userId`). Compiled once by @bufbuild/cel (Buf's
// evaluator, tested against the CEL conformance suite), never `eval`.
import { createRequire } from 'node:module'
import type * as CelLib from '@bufbuild/cel'
import type { Parsed } from './duration.ts'

export type Bindings = Record<string, unknown>

/** A compiled expression: true only when it evaluates to true; an error (a missing field) is false. */
export type Predicate = (bindings: Bindings) => boolean

/**
 * @bufbuild/cel and its protobuf runtime (~4 MiB of modules) are loaded by the first expression
 * compiled, not at start: most deployments have none, and a module's source stays in memory for
 * the life of the process (idle RSS, docs/operations.md "Memory"). require() loads synchronously.
 */
let loaded: { cel: typeof CelLib; env: ReturnType<typeof CelLib.celEnv> } | undefined
function celLib() {
  if (!loaded) {
    const cel = createRequire(import.meta.url)('@bufbuild/cel') as typeof CelLib
    loaded = { cel, env: cel.celEnv() }
  }
  return loaded
}
const compiled = new Map<string, Predicate>()
const MAX_CACHED = 10_000

/** A compiled expression giving a value: a string, number or boolean; null when it fails or gives anything else. */
export type Evaluator = (bindings: Bindings) => string | number | boolean | null

const evaluators = new Map<string, Evaluator>()

/** Compiles `source` once (then cached) into a function giving its value (a key, a priority). */
export function compileValue(source: unknown, variables: readonly string[]): Parsed<Evaluator> {
  const key = `${variables.join(',')}\0${source}`
  let evaluator = typeof source === 'string' ? evaluators.get(key) : undefined
  if (!evaluator) {
    const planned = planExpression(source, variables)
    if (!planned.ok) return planned
    const run = planned.value
    const { isCelError } = celLib().cel
    evaluator = (bindings) => {
      try {
        const result = run(bindings as never)
        if (isCelError(result)) return null
        if (typeof result === 'bigint') return Number(result)
        return typeof result === 'string' || typeof result === 'number' || typeof result === 'boolean' ? result : null
      } catch {
        return null
      }
    }
    if (evaluators.size >= MAX_CACHED) evaluators.clear()
    evaluators.set(key, evaluator)
  }
  return { ok: true, value: evaluator }
}

function planExpression(source: unknown, variables: readonly string[]): Parsed<ReturnType<typeof CelLib.plan>> {
  if (typeof source !== 'string' || source.trim() === '') return { ok: false, message: 'must be a CEL expression' }
  const { cel, env } = celLib()
  try {
    const parsed = cel.parse(source)
    const unknown = [...freeNames(parsed.expr)].filter((name) => !variables.includes(name))
    if (unknown.length > 0)
      return { ok: false, message: `unknown name ${unknown[0]} (the expression may use ${variables.join(', ')})` }
    return { ok: true, value: cel.plan(env, parsed) }
  } catch (err) {
    return { ok: false, message: `not valid CEL: ${(err as Error).message}` }
  }
}

/** Compiles `source` once (then cached). `variables`: the names it may use, checked here. */
export function compileExpression(source: unknown, variables: readonly string[]): Parsed<Predicate> {
  if (typeof source !== 'string' || source.trim() === '') return { ok: false, message: 'must be a CEL expression' }
  const key = `${variables.join(',')}\0${source}`
  const cached = compiled.get(key)
  if (cached) return { ok: true, value: cached }
  const planned = planExpression(source, variables)
  if (!planned.ok) return planned
  const run = planned.value
  const { isCelError } = celLib().cel
  const predicate: Predicate = (bindings) => {
    try {
      const result = run(bindings as never)
      return !isCelError(result) && result === true
    } catch {
      return false
    }
  }
  if (compiled.size >= MAX_CACHED) compiled.clear()
  compiled.set(key, predicate)
  return { ok: true, value: predicate }
}

/** The variables an expression reads: its identifiers, but for those a macro binds (`exists(x, …)`). */
function freeNames(node: unknown, bound: ReadonlySet<string> = new Set(), names = new Set<string>()): Set<string> {
  if (node === null || typeof node !== 'object') return names
  const kind = (node as { exprKind?: { case?: string; value?: Record<string, unknown> } }).exprKind
  if (kind?.case === 'identExpr') {
    const name = kind.value!.name as string
    if (!bound.has(name)) names.add(name)
  } else if (kind?.case === 'comprehensionExpr') {
    const c = kind.value!
    freeNames(c.iterRange, bound, names)
    freeNames(c.accuInit, bound, names)
    const inner = new Set([...bound, c.iterVar as string, c.iterVar2 as string, c.accuVar as string])
    for (const part of [c.loopCondition, c.loopStep, c.result]) freeNames(part, inner, names)
  } else for (const child of Object.values(node)) freeNames(child, bound, names)
  return names
}

const PATH = /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/

/** A field path such as `data.orderId` (what `match` names), checked. */
export function parsePath(value: unknown): Parsed<string[]> {
  if (typeof value !== 'string' || !PATH.test(value))
    return { ok: false, message: 'must be a field path such as "data.orderId"' }
  return { ok: true, value: value.split('.') }
}

/** The value at `path` of an event, or undefined when a part is missing. */
export function valueAt(root: unknown, path: readonly string[]): unknown {
  let value = root
  for (const part of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}
