// What one execution of a run record leads to. Pure: the runner publishes what this decides.
import { backoffDelayMs, retryPolicies, type RetryPolicy } from '../core/retry.ts'
import type { Execution } from '../core/execution.ts'
import type { RunDoc } from '../core/run-doc.ts'
import { snapshotOf, type RunRecord } from '../core/run-record.ts'
import type { EventRecord } from '../core/event.ts'
import { waitingRecord } from './waits.ts'

export type Outcome =
  /** A step completed: its checkpoint is the next record of the run. */
  | { kind: 'continue'; next: RunRecord }
  /** The attempt threw and attempts remain: the next record is due after the backoff delay. */
  | { kind: 'retry'; next: RunRecord }
  | { kind: 'completed'; run: RunDoc }
  | { kind: 'failed'; run: RunDoc }
  /** A cancel signal: the run ends without executing further (runner/cancel.ts). */
  | { kind: 'cancelled'; run: RunDoc }
  /** Flow control started no run (runner/gate.ts): the run shows why. */
  | { kind: 'skipped'; run: RunDoc }
  /** A step paused the run: the next record waits (runner/waits.ts) until its due time or a signal. */
  | { kind: 'wait'; next: RunRecord; invoke?: EventRecord }

/** Backoff between attempts; `retries` comes from each function. */
export const FUNCTION_BACKOFF: Omit<RetryPolicy, 'retries'> = retryPolicies.functionBackoff

export function decide(
  record: RunRecord,
  execution: Execution,
  policy: RetryPolicy,
  startedAt: number,
  nowMs: number,
): Outcome {
  const {
    failing: _lastError,
    dueAt: _dueAt,
    waiting: _waiting,
    ...settled
  } = { ...record, startedAt: record.startedAt ?? startedAt }
  const terminalVersion = record.seq * 2 + 2
  switch (execution.kind) {
    case 'step':
      return {
        kind: 'continue',
        next: {
          ...settled,
          seq: record.seq + 1,
          attempt: 0,
          steps: [
            ...record.steps,
            {
              id: execution.stepId,
              output: execution.output,
              attempts: record.attempt + 1,
              endedAt: nowMs,
              ...(execution.name !== undefined && { name: execution.name }),
              ...(execution.error !== undefined && { error: execution.error }),
            },
          ],
        },
      }
    case 'completed':
      return {
        kind: 'completed',
        run: snapshotOf(settled, 'completed', { output: execution.output, endedAt: nowMs, version: terminalVersion }),
      }
    case 'error': {
      const { stepId, error, name } = execution
      const named = name !== undefined ? { name } : {}
      if (execution.nonRetriable || record.attempt >= policy.retries) {
        const run = snapshotOf(settled, 'failed', { error, endedAt: nowMs, version: terminalVersion })
        if (stepId !== undefined)
          run.steps.push({
            id: stepId,
            ...named,
            status: 'failed',
            error,
            attempts: record.attempt + 1,
            endedAt: nowMs,
          })
        return { kind: 'failed', run }
      }
      // An app may ask for a later retry (Retry-After), never a sooner one.
      const dueAt = Math.max(nowMs + backoffDelayMs(policy, record.attempt), execution.retryAt ?? 0)
      return {
        kind: 'retry',
        next: {
          ...settled,
          seq: record.seq + 1,
          attempt: record.attempt + 1,
          attempts: record.attempts + 1,
          failing: { ...(stepId !== undefined && { stepId }), ...named, error, endedAt: nowMs },
          dueAt,
        },
      }
    }
    case 'pause':
      return {
        kind: 'wait',
        ...waitingRecord(record, execution.stepId, execution.pause, nowMs, settled, execution.name),
      }
    default: {
      const unknown: never = execution
      throw new Error(`unknown execution ${JSON.stringify(unknown)}`)
    }
  }
}
