// The cancellations (cancelOn) of a run, registered with the wait matcher when the run is queued, so
// a matching event ends it whether it is queued, running, waiting or retrying. The runner forgets
// them when the run ends (runner/apply.ts), with the same IDs and keys.
import type { FunctionDoc } from '../control/types.ts'
import type { RunRecord } from '../core/run-record.ts'
import { cancelWaitId, MAX_CANCEL_MS, waitKey, type WaitRegistration } from './waits-types.ts'
import { asTrigger } from './routes.ts'

export function cancelRegistrations(fn: FunctionDoc, record: RunRecord, nowMs: number): WaitRegistration[] {
  return (fn.cancelOn ?? []).map((rule, i) => ({
    waitId: cancelWaitId(record.runId, i),
    kind: 'cancel',
    ...waitKey(record.env, rule.event, rule.match, record.event),
    ...(rule.if !== undefined && { if: rule.if, trigger: asTrigger(record.event) }),
    sinceMs: nowMs,
    expiresAt: nowMs + (rule.timeoutMs ?? MAX_CANCEL_MS),
    target: {
      env: record.env,
      functionKey: fn.key,
      runId: record.runId,
      ...(record.routeKey !== undefined && { routeKey: record.routeKey }),
    },
  }))
}
