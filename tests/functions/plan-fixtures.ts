// Records and signals of one run for the runner's plan tests (tests/functions/plan*.test.ts).
import type { EventRecord } from '../../core/event.ts'
import type { FlowControl } from '../../core/flow.ts'
import type { FunctionSpec } from '../../core/function.ts'
import type { RetryPolicy } from '../../core/retry.ts'
import { newUlid } from '../../core/ids.ts'
import { firstRecord, type RunRecord, type RunSignal } from '../../core/run-record.ts'
import { decide } from '../../runner/outcome.ts'
import type { RunView } from '../../runner/plan.ts'
import type { RunMark } from '../../runner/state.ts'

export const NOW = Date.parse('2026-01-01T00:00:00Z')
export const policy: RetryPolicy = { retries: 3, initialDelayMs: 1000, maxDelayMs: 300_000, factor: 2, jitter: 0 }

/** An event accepted at `at`. */
export function event(
  name = 'shop/order.placed',
  data: Record<string, unknown> = { orderId: 7 },
  at = NOW - 1000,
): EventRecord {
  const internalId = newUlid(at)
  return { internalId, id: internalId, name, data, ts: at, env: 'production', receivedAt: at, source: { kind: 'api' } }
}

/** Function `app-fn` of `event`'s name, with `flow`. */
export const functionSpec = (flow: FlowControl, trigger = 'shop/order.placed'): FunctionSpec => ({
  env: 'production',
  key: 'app-fn',
  appId: 'app',
  id: 'fn',
  name: 'fn',
  triggers: [{ event: trigger }],
  cancelOn: [],
  flow,
  retries: 3,
  timeoutMs: 60_000,
})

export const first = (e = event()): RunRecord => firstRecord(e, 'app-fn', NOW - 500)

/** Record `first`'s successor paused at step "wait" for `kind`, parked until NOW + 60 s. */
export function waiting(kind: 'event' | 'sleep' | 'invoke', record = first()): RunRecord {
  const pause =
    kind === 'event'
      ? { kind: 'event' as const, event: 'shop/order.paid', timeoutMs: 60_000 }
      : kind === 'sleep'
        ? { kind: 'sleep' as const, durationMs: 60_000 }
        : { kind: 'invoke' as const, functionKey: 'app-other', data: {}, timeoutMs: 60_000 }
  const outcome = decide(record, { kind: 'pause', stepId: 'wait', pause }, policy, NOW, NOW)
  if (outcome.kind !== 'wait') throw new Error('not a wait')
  return outcome.next
}

export const mark = (seq: number, state: RunMark['state'] = 'open', cause?: RunMark['cause']): RunMark => ({
  seq,
  state,
  ...(cause && { cause }),
})
export const view = (m: RunMark, parked: RunRecord | null = null): RunView => ({ mark: m, parked })

export const cancel = (r: RunRecord): RunSignal => ({
  runId: r.runId,
  signal: { kind: 'cancel', at: NOW, cause: { kind: 'api' } },
})
export const eventSignal = (r: RunRecord, e = event('shop/order.paid')): RunSignal => ({
  runId: r.runId,
  signal: { kind: 'event', seq: r.seq, event: e },
})
export const invokedSignal = (r: RunRecord, result: { output?: unknown; error?: { name: string; message: string } }) =>
  ({ runId: r.runId, signal: { kind: 'invoked', seq: r.seq, ...result } }) as RunSignal
