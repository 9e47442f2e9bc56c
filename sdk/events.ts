// Events and step memos as an Inngest SDK reads them. Sluice's internal events keep Sluice's
// names on the log and in the store; an app sees the names Inngest gives them.
import type { MemoisedStep } from '../core/execution.ts'
import type { ExecutionEvent } from '../core/execution.ts'

const INNGEST_NAMES: Record<string, string> = {
  'sluice/function.failed': 'inngest/function.failed',
  'sluice/function.finished': 'inngest/function.finished',
  'sluice/function.invoked': 'inngest/function.invoked',
  'sluice/cron': 'inngest/scheduled.timer',
}

export interface InngestEvent {
  id: string
  name: string
  data: Record<string, unknown>
  ts: number
}

export function inngestEvent(e: Pick<ExecutionEvent, 'id' | 'name' | 'data' | 'ts'>): InngestEvent {
  return { id: e.id, name: INNGEST_NAMES[e.name] ?? e.name, data: e.data, ts: e.ts }
}

/**
 * The `steps` of a call (SDK_SPEC.md 5.2): `{data}` for a step's result or an invocation's, `{error}`
 * for a step that failed for good, `null` for a sleep, and the awaited event itself (or null) for a wait.
 */
export function memoOf(steps: readonly MemoisedStep[]): Record<string, unknown> {
  const memo: Record<string, unknown> = {}
  for (const s of steps) {
    if (s.error) memo[s.id] = { error: s.error }
    else if (s.pause?.kind === 'sleep') memo[s.id] = null
    else if (s.pause?.kind === 'event') memo[s.id] = s.output === null ? null : inngestEvent(s.output as ExecutionEvent)
    else memo[s.id] = { data: s.output ?? null }
  }
  return memo
}
