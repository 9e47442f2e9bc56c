// Metrics of the runner stage (docs/operations.md, "Metrics"), labelled by function key (capped).
import { cappedLabel, counter, histogram } from '../core/metrics.ts'
import type { Outcome } from './outcome.ts'

export const functionRuns = counter<'function' | 'outcome'>({
  name: 'sluice_function_runs_total',
  help: 'Function runs ended, by function and outcome (completed, failed, cancelled, skipped)',
  labelNames: ['function', 'outcome'],
})

export const skippedRuns = counter<'function' | 'reason'>({
  name: 'sluice_function_runs_skipped_total',
  help: 'Events that started no run because of flow control, by function and reason (RATE_LIMITED, IDEMPOTENT, SINGLETON_RUNNING, PAUSED)',
  labelNames: ['function', 'reason'],
})

export const stepDuration = histogram<'function' | 'outcome'>({
  name: 'sluice_function_step_duration_seconds',
  help: 'Time one execution of a run took (up to its next new step or its end), by function and what it led to (continue, retry, wait, completed, failed)',
  labelNames: ['function', 'outcome'],
  buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
})

/** The first 100 functions seen keep their key as label. */
export const functionLabel = cappedLabel(100)

/** Counts a run that ended, once its outcome is durable. */
export function countRunEnd(fn: string, outcome: Outcome): void {
  if (
    outcome.kind === 'completed' ||
    outcome.kind === 'failed' ||
    outcome.kind === 'cancelled' ||
    outcome.kind === 'skipped'
  )
    functionRuns.inc({ function: fn, outcome: outcome.kind })
  if (outcome.kind === 'skipped') skippedRuns.inc({ function: fn, reason: outcome.run.error?.code ?? 'unknown' })
}
