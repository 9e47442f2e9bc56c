// Publishing what an execution led to (an Outcome), and what a run's end tells others: the invoked
// run's caller, and the wait matcher, which forgets the run's cancellations. The order matters where
// a signal may follow: a waiting record is durable before anything that could resume it.
import type { Logger } from 'pino'
import type { Output } from '../bus/output.ts'
import type { EventRecord } from '../core/event.ts'
import type { RunDoc } from '../core/run-doc.ts'
import { snapshotOf, type FunctionRecord, type RunRecord, type RunSignal } from '../core/run-record.ts'
import type { FunctionSpec } from '../core/function.ts'
import { cancelWaitId, waitKey, type WaitKey, type WaitRegistration, type WaitsOutput } from '../router/waits-types.ts'
import type { Outcome } from './outcome.ts'
import { failedEvent, finishedEvent } from './events.ts'

export interface RunnerOutputs {
  /** This function's own topic: its runs' records and the signals to them. */
  self: Output<FunctionRecord>
  runs: Output<RunDoc>
  /** Events sent by steps, like ingest's: step.sendEvent, step.invoke, sluice/function.failed. */
  incoming: Output<EventRecord>
  /** Another function's topic: where an invoked run tells its caller it ended. */
  functionRuns(fn: { env: string; key: string }): Output<FunctionRecord>
  waits: WaitsOutput
  /** Whether a function of `env` listens to sluice/function.finished: only then is it sent. */
  finishedHeard?(env: string): boolean
}

export function createApplier(fn: FunctionSpec, outputs: RunnerOutputs, log: Logger) {
  /** The cancellations of a run (cancelOn), as the router registered them when it queued the run. */
  const cancelKeys = (record: RunRecord): Array<WaitKey & { waitId: string }> =>
    fn.cancelOn.map((rule, i) => ({
      waitId: cancelWaitId(record.runId, i),
      ...waitKey(record.env, rule.event, rule.match, record.event),
    }))

  async function ended(record: RunRecord, run: RunDoc): Promise<void> {
    const invokedBy = record.invokedBy
    const signal: RunSignal | undefined = invokedBy && {
      runId: invokedBy.runId,
      ...(invokedBy.routeKey !== undefined && { routeKey: invokedBy.routeKey }),
      signal: {
        kind: 'invoked',
        seq: invokedBy.seq,
        ...(run.status === 'completed' ? { output: run.output ?? null } : { error: run.error ?? endedWithout(run) }),
      },
    }
    const finished = outputs.finishedHeard?.(record.env) ? finishedEvent(record, run) : undefined
    const forget = [...cancelKeys(record)]
    if (record.waiting?.kind === 'event')
      forget.push({ waitId: `${record.runId}\0${record.seq}`, ...eventWaitKey(record) })
    await Promise.all([
      signal ? outputs.functionRuns({ env: invokedBy!.env, key: invokedBy!.functionKey }).publish([signal]) : null,
      forget.length > 0 ? outputs.waits.remove(forget) : null,
      finished ? outputs.incoming.publish([finished]) : null,
    ])
  }

  return async function apply(record: RunRecord, outcome: Outcome): Promise<void> {
    switch (outcome.kind) {
      case 'continue':
      case 'retry':
        await Promise.all([
          outputs.self.publish([outcome.next]),
          outputs.runs.publish([snapshotOf(outcome.next, 'running')]),
        ])
        return
      case 'wait': {
        const { next } = outcome
        // First: whatever resumes the run (an event, the invoked run's end) finds this record parked.
        await outputs.self.publish([next])
        await Promise.all([
          outputs.runs.publish([snapshotOf(next, 'waiting')]),
          next.waiting?.kind === 'event' ? outputs.waits.register([eventWait(fn, record, next)]) : null,
          outcome.invoke ? outputs.incoming.publish([outcome.invoke]) : null,
        ])
        return
      }
      case 'completed':
      case 'cancelled':
      case 'skipped':
        await Promise.all([outputs.runs.publish([outcome.run]), ended(record, outcome.run)])
        return
      case 'failed': {
        log.info({ runId: record.runId, error: outcome.run.error?.message }, 'run failed')
        const notice = failedEvent(record, outcome.run)
        await Promise.all([
          outputs.runs.publish([outcome.run]),
          notice ? outputs.incoming.publish([notice]) : undefined,
          ended(record, outcome.run),
        ])
        return
      }
      default: {
        const unknown: never = outcome
        throw new Error(`unknown outcome ${JSON.stringify(unknown)}`)
      }
    }
  }
}

function endedWithout(run: RunDoc) {
  return { name: 'Error', message: `the invoked run ended ${run.status}` }
}

const eventWaitKey = (record: RunRecord): WaitKey =>
  waitKey(record.env, record.waiting!.event!, record.waiting!.match, record.event)

function eventWait(fn: FunctionSpec, record: RunRecord, next: RunRecord): WaitRegistration {
  const waiting = next.waiting!
  return {
    waitId: `${next.runId}\0${next.seq}`,
    kind: 'resume',
    ...eventWaitKey(next),
    ...(waiting.if !== undefined && { if: waiting.if, trigger: triggerOf(record.event) }),
    sinceMs: waiting.startedAt,
    expiresAt: waiting.until,
    target: {
      env: next.env,
      functionKey: fn.key,
      runId: next.runId,
      seq: next.seq,
      ...(next.routeKey !== undefined && { routeKey: next.routeKey }),
    },
  }
}

export function triggerOf(e: EventRecord): NonNullable<WaitRegistration['trigger']> {
  return { internalId: e.internalId, id: e.id, name: e.name, data: e.data, ts: e.ts, env: e.env }
}
