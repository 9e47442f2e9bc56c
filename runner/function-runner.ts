// The runner of one function: one consumer group on the function's topic. Each record is one step
// of a run: execute up to the next new step, then checkpoint it as the run's next record, retry it
// later, or finish the run. See ARCHITECTURE.md.
import type { Logger } from 'pino'
import type { Batch, Bus, Subscription } from '../bus/types.ts'
import type { Output } from '../bus/output.ts'
import type { Codec } from '../bus/codec.ts'
import type { EventRecord } from '../core/event.ts'
import type { RetryPolicy } from '../core/retry.ts'
import { sleep } from '../core/retry.ts'
import { secondsSince } from '../core/metrics.ts'
import type { SluiceFunction } from '../client/function.ts'
import { executeFunction } from '../client/step.ts'
import type { RunDoc } from '../core/run-doc.ts'
import { snapshotOf, type RunRecord } from '../core/run-record.ts'
import { decide, type Outcome } from './outcome.ts'
import { cancelled } from './cancel.ts'
import type { ProcessedMark, RunnerState } from './state.ts'
import { failedEvent, functionEvent, sentEvents, type SendLimits } from './events.ts'
import { countRunEnd, functionLabel, stepDuration } from './metrics.ts'

export interface FunctionRunnerDeps {
  bus: Bus
  fn: SluiceFunction
  codec: Codec<RunRecord>
  /** `self`: this function's own topic (checkpoints and retries); `incoming`: sent events, like ingest. */
  outputs: { self: Output<RunRecord>; runs: Output<RunDoc>; incoming: Output<EventRecord> }
  /** Opens the state of one input partition (the same object may serve several). */
  openState(partition: number): Promise<RunnerState>
  log: Logger
}

export interface FunctionRunnerConfig {
  inputTopic: string
  group: string
  backoff: Omit<RetryPolicy, 'retries'>
  eventLimits: SendLimits
  /** How long a run's processed mark is kept (duplicates older than this are not expected). */
  markRetentionMs: number
  maxBatchRecords: number
}

const PARK_SCAN_LIMIT = 500
const IDLE_TIMER_CHECK_MS = 1_000
const MARK_EXPIRY_INTERVAL_MS = 60 * 60_000
const RUNNING_SNAPSHOT_AFTER_MS = 100

export function createFunctionRunner(deps: FunctionRunnerDeps, config: FunctionRunnerConfig) {
  const { fn, outputs, log } = deps
  const policy: RetryPolicy = { ...config.backoff, retries: fn.retries }
  const fnLabel = functionLabel(fn.key)
  const states = new Map<number, RunnerState>()
  let subscription: Subscription | undefined
  let stopping = false
  let woken = false
  let sleeping: AbortController | undefined
  let timerLoop: Promise<void> | undefined
  /** Outcomes executed but not yet durable, by run and seq (see handle); emptied as they are applied. */
  const unapplied = new Map<string, Outcome>()

  /** A newly parked retry may be due before the timer loop's next check. */
  function wakeTimers(): void {
    woken = true
    sleeping?.abort()
  }

  async function handle(batch: Batch): Promise<void> {
    const state = states.get(batch.partition)
    if (!state) throw new Error(`runner ${fn.key}: partition ${batch.partition} has no open state`)
    const byRun = new Map<string, RunRecord[]>()
    for (const { value } of batch.records) {
      const record = deps.codec.decode(value)
      const list = byRun.get(record.runId)
      if (list) list.push(record)
      else byRun.set(record.runId, [record])
    }
    const runIds = [...byRun.keys()]
    const marks = await state.processed(runIds)
    const processed: ProcessedMark[] = []
    const parked: RunRecord[] = []
    const now = Date.now()
    // Runs execute concurrently; the records of one run (duplicates) in order. All settle before
    // a failure redelivers the batch, so a redelivery never overlaps executions still in flight.
    const settled = await Promise.allSettled(
      runIds.map(async (runId, i) => {
        let last = marks[i]
        for (const record of byRun.get(runId)!) {
          if (record.seq <= last) continue // a duplicate of a record already processed
          if (record.dueAt !== undefined && record.dueAt > now) {
            parked.push(record)
            continue
          }
          // A redelivery after the log refused this record's outcome applies that outcome again instead
          // of executing again: an outage of the log must not re-run the step once per redelivery.
          const key = `${runId}\0${record.seq}`
          const outcome = unapplied.get(key) ?? (await execute(record))
          unapplied.delete(key)
          await apply(record, outcome).catch((err) => {
            unapplied.set(key, outcome)
            throw err
          })
          countRunEnd(fnLabel, outcome)
          last = record.seq
          processed.push({ runId, seq: record.seq })
        }
      }),
    )
    // Only after their successors are durable: a crash before this line re-executes the steps in flight.
    await state.save({ processed, parked })
    if (parked.length > 0) wakeTimers()
    // The runs that could not publish their outcome (the log is unavailable) run again on redelivery.
    const failure = settled.find((r) => r.status === 'rejected')
    if (failure) throw failure.reason
  }

  async function execute(record: RunRecord): Promise<Outcome> {
    if (record.cancel) return cancelled(record, Date.now())
    const startedAt = Date.now()
    const startedNs = process.hrtime.bigint()
    // A first execution that takes a while shows as running before its checkpoint; a quick one
    // goes from queued to its outcome without the extra snapshot. Not awaited: only informative.
    const showRunning =
      record.seq === 0
        ? setTimeout(() => {
            outputs.runs
              .publish([snapshotOf({ ...record, startedAt }, 'running', { version: 1 })])
              .catch((err) => log.warn({ err, runId: record.runId }, 'run snapshot not written'))
          }, RUNNING_SNAPSHOT_AFTER_MS)
        : undefined
    const execution = await executeFunction(fn, {
      event: functionEvent(record.event),
      runId: record.runId,
      attempt: record.attempt,
      steps: record.steps,
      logger: log.child({ runId: record.runId }),
      sendEvents: async (stepId, events) => {
        const sent = sentEvents(record, stepId, events, config.eventLimits, Date.now())
        await outputs.incoming.publish(sent)
        return sent.map((e) => e.internalId)
      },
    })
    clearTimeout(showRunning)
    const outcome = decide(record, execution, policy, startedAt, Date.now())
    stepDuration.observe({ function: fnLabel, outcome: outcome.kind }, secondsSince(startedNs))
    return outcome
  }

  async function apply(record: RunRecord, outcome: Outcome): Promise<void> {
    switch (outcome.kind) {
      case 'continue':
      case 'retry':
        await Promise.all([
          outputs.self.publish([outcome.next]),
          outputs.runs.publish([snapshotOf(outcome.next, 'running')]),
        ])
        return
      case 'completed':
      case 'cancelled':
        await outputs.runs.publish([outcome.run])
        return
      case 'failed': {
        log.info({ runId: record.runId, error: outcome.run.error?.message }, 'run failed')
        const notice = failedEvent(record, outcome.run)
        await Promise.all([
          outputs.runs.publish([outcome.run]),
          notice ? outputs.incoming.publish([notice]) : undefined,
        ])
        return
      }
      default: {
        const unknown: never = outcome
        throw new Error(`unknown outcome ${JSON.stringify(unknown)}`)
      }
    }
  }

  /** Re-publishes parked retries once due; only then forgets them (a crash re-publishes: fenced). */
  async function runTimers(): Promise<void> {
    let nextExpiryAt = 0
    while (!stopping) {
      woken = false
      let next = Date.now() + IDLE_TIMER_CHECK_MS
      try {
        const expire = Date.now() >= nextExpiryAt
        for (const state of new Set(states.values())) {
          for (
            let due = await state.due(Date.now(), PARK_SCAN_LIMIT);
            due.length > 0;
            due = await state.due(Date.now(), PARK_SCAN_LIMIT)
          ) {
            await outputs.self.publish(due.map(({ dueAt: _, ...ready }) => ready))
            await state.unpark(due)
          }
          const dueAt = await state.nextDueAt()
          if (dueAt !== null) next = Math.min(next, dueAt)
          if (expire) await state.expire(Date.now() - config.markRetentionMs)
        }
        if (expire) nextExpiryAt = Date.now() + MARK_EXPIRY_INTERVAL_MS
      } catch (err) {
        log.error({ err }, 're-publishing due retries failed; trying again')
      }
      if (stopping || woken) continue
      sleeping = new AbortController()
      await sleep(Math.max(0, next - Date.now()), sleeping.signal)
      sleeping = undefined
    }
  }

  return {
    async start() {
      stopping = false
      subscription = await deps.bus.subscribe({
        group: config.group,
        topics: [config.inputTopic],
        maxBatchRecords: config.maxBatchRecords,
        handler: handle,
        onAssign: async (assigned) => {
          for (const p of assigned.flatMap((a) => a.partitions)) states.set(p, await deps.openState(p))
          wakeTimers()
        },
        onRevoke: async (revoked) => {
          // Another runner now owns these runs; it executes what was not applied here.
          unapplied.clear()
          for (const p of revoked.flatMap((a) => a.partitions)) {
            const state = states.get(p)
            states.delete(p)
            if (state && ![...states.values()].includes(state)) await state.close()
          }
        },
      })
      timerLoop = runTimers()
    },
    async stop() {
      stopping = true
      wakeTimers()
      await subscription?.stop()
      await timerLoop
    },
  }
}
