// The runner of one function: one consumer group on the function's topic. Each record is one step
// of a run: execute up to the next new step, then checkpoint it as the run's next record, retry it
// later, pause it, or finish the run. Signals on the same topic resume paused runs or cancel them.
// What to do with each record is planned (runner/plan.ts, pure); this file applies the actions: it
// executes (through the function's Executor), publishes (apply.ts) and writes the state. ARCHITECTURE.md.
import type { Logger } from 'pino'
import type { Batch, Bus, Subscription } from '../bus/types.ts'
import type { Codec } from '../bus/codec.ts'
import type { RetryPolicy } from '../core/retry.ts'
import { secondsSince } from '../core/metrics.ts'
import type { FunctionSpec } from '../core/function.ts'
import { isSignal, snapshotOf, type FunctionRecord, type RunRecord } from '../core/run-record.ts'
import { decide, type Outcome } from './outcome.ts'
import { planRecord, markAfter, type Action } from './plan.ts'
import type { RunMark, RunnerState, StateUpdate } from './state.ts'
import { functionEvent, sentEvents, type CheckSent, type SendLimits } from './events.ts'
import { countRunEnd, functionLabel, stepDuration } from './metrics.ts'
import { createApplier, type RunnerOutputs } from './apply.ts'
import { createCoalescer } from './coalesce.ts'
import { createTimers } from './timers.ts'
import { createCronSchedule } from './cron.ts'
import { createFlowHandler } from './flow-handler.ts'
import { createHold } from './hold.ts'
import type { PauseDoc } from '../control/types.ts'
import { subscribeConsumers, type TopicConsumer } from './consumer-groups.ts'
import type { Executor } from './executor.ts'

export interface FunctionRunnerDeps {
  bus: Bus
  fn: FunctionSpec
  /** Where the function's code runs: in this process, or an app called over HTTP (executor.ts). */
  execute: Executor
  codec: Codec<FunctionRecord>
  outputs: RunnerOutputs
  /** Whether `key` is served in `env`: step.invoke of anything else fails at once. */
  isServed(env: string, key: string): boolean
  /** The function's pause, if it was ever paused (the control plane's, in memory). */
  pauseOf(): PauseDoc | undefined
  /** Opens the state of one input partition (the same object may serve several). */
  openState(partition: number): Promise<RunnerState>
  /** The environment's schema modes for step.sendEvent; none checks nothing. */
  checkSent?: CheckSent
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

const RUNNING_SNAPSHOT_AFTER_MS = 100
/** The longest a finished execution's records wait for the others in flight (coalesce.ts). */
const COALESCE_MAX_WAIT_MS = 20

export function createFunctionRunner(deps: FunctionRunnerDeps, config: FunctionRunnerConfig) {
  const { fn, log } = deps
  // The next records and snapshots of executions that end one after another leave in one write (coalesce.ts).
  const coalescer = createCoalescer(COALESCE_MAX_WAIT_MS)
  const outputs: RunnerOutputs = {
    ...deps.outputs,
    self: coalescer.wrap(deps.outputs.self),
    runs: coalescer.wrap(deps.outputs.runs),
  }
  const policy: RetryPolicy = { ...config.backoff, retries: fn.retries }
  const fnLabel = functionLabel(fn.key)
  const states = new Map<number, RunnerState>()
  const apply = createApplier(fn, outputs, log)
  const timers = createTimers(() => states.values(), outputs.self, config, log)
  // Partition 0's owner runs the function's cron schedules: one owner at a time, handed over with it.
  const cron = createCronSchedule(fn, outputs.incoming, log)
  let subscription: Subscription | undefined
  /** Outcomes executed but not yet durable, by run and seq (see handle); emptied as they are applied. */
  const unapplied = new Map<string, Outcome>()
  // A paused function's new runs wait in its state until it is resumed (hold.ts).
  const hold = createHold({
    fn,
    pauseOf: deps.pauseOf,
    self: outputs.self,
    applyOnce,
    states: () => states.values(),
    log,
  })
  // With flow control, records wait in a durable queue and a scheduler executes them (flow-handler.ts).
  const flow =
    fn.flow &&
    createFlowHandler(
      { fn, flow: fn.flow, outputs, execute, applyOnce, policy, hold, wakeTimers: () => timers.wake(), log },
      { maxInFlight: config.maxBatchRecords },
    )

  async function handle(batch: Batch): Promise<void> {
    const state = states.get(batch.partition)
    if (!state) throw new Error(`runner ${fn.key}: partition ${batch.partition} has no open state`)
    if (flow)
      return flow.handle(
        state,
        batch.records.map(({ value }) => deps.codec.decode(value)),
      )
    const byRun = new Map<string, FunctionRecord[]>()
    for (const { value } of batch.records) {
      const record = deps.codec.decode(value)
      const list = byRun.get(record.runId)
      if (list) list.push(record)
      else byRun.set(record.runId, [record])
    }
    const runIds = [...byRun.keys()]
    const marks = await state.processed(runIds)
    const update: StateUpdate = { marks: [], parked: [], unparked: [] }
    // Runs execute concurrently; the records of one run in order. All settle before a failure
    // redelivers the batch, so a redelivery never overlaps executions still in flight.
    const settled = await Promise.allSettled(
      runIds.map((runId, i) => handleRun(state, runId, byRun.get(runId)!, marks[i], update)),
    )
    // Only after their successors are durable: a crash before this line re-executes the steps in flight.
    await state.save(update)
    if (update.parked.length > 0) timers.wake()
    // The runs that could not publish their outcome (the log is unavailable) run again on redelivery.
    const failure = settled.find((r) => r.status === 'rejected')
    if (failure) throw failure.reason
  }

  /** The records and signals of one run in a batch, in order, planned (plan.ts) and applied here. */
  async function handleRun(
    state: RunnerState,
    runId: string,
    items: FunctionRecord[],
    initial: RunMark,
    update: StateUpdate,
  ): Promise<void> {
    let mark = initial
    let parkedHere: RunRecord | undefined
    const setMark = (next: RunMark) => {
      mark = next
      const at = update.marks.findIndex((m) => m.runId === runId)
      if (at >= 0) update.marks[at] = { runId, mark }
      else update.marks.push({ runId, mark })
    }
    // A parked record is let go only once what replaced it is durable: were its outcome refused (and the
    // batch redelivered), a parked record released in this batch's state write would be gone, and the
    // redelivered signal would find nothing to resume.
    const finish = async (record: RunRecord, outcome: Outcome, parked?: RunRecord) => {
      await applyOnce(record, outcome)
      if (parked === parkedHere && parkedHere) {
        update.parked.splice(update.parked.indexOf(parkedHere), 1)
        parkedHere = undefined
      } else if (parked) update.unparked.push(parked)
      setMark(markAfter(record, outcome))
    }
    async function run(action: Action): Promise<void> {
      switch (action.kind) {
        case 'skip':
          return
        case 'execute':
          return finish(action.of, await execute(action.record), action.unpark)
        case 'finish':
          return finish(action.record, action.outcome, action.unpark)
        case 'park':
          parkedHere = action.record
          update.parked.push(action.record)
          return
        case 'hold':
          update.queued = [...(update.queued ?? []), action.record]
          return
        case 'mark':
          return setMark(action.mark)
        default:
          throw new Error(`a function without flow control has no ${action.kind} action`)
      }
    }

    for (const item of items) {
      // Only a signal looks for the run's parked record (parked by this batch, or before).
      const parked = parkedHere ?? (isSignal(item) ? await state.parkedOf(runId) : null)
      const planned = planRecord({ mark, parked }, item, { nowMs: Date.now(), paused: hold.paused(), policy })
      for (const action of planned) await run(action)
    }
  }

  /** A redelivery after the log refused an outcome applies it again instead of executing again. */
  async function applyOnce(record: RunRecord, outcome: Outcome): Promise<void> {
    const key = `${record.runId}\0${record.seq}`
    const pending = unapplied.get(key) ?? outcome
    unapplied.delete(key)
    await apply(record, pending).catch((err) => {
      unapplied.set(key, pending)
      throw err
    })
    countRunEnd(fnLabel, pending)
  }

  async function execute(record: RunRecord): Promise<Outcome> {
    const cached = unapplied.get(`${record.runId}\0${record.seq}`)
    if (cached) return cached
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
    coalescer.started()
    const execution = await deps
      .execute({
        event: functionEvent(record.event),
        events: (record.events ?? [record.event]).map(functionEvent),
        runId: record.runId,
        attempt: record.attempt,
        steps: record.steps,
        logger: log.child({ runId: record.runId }),
        sendEvents: async (stepId, events) => {
          const sent = sentEvents(record, stepId, events, config.eventLimits, Date.now(), deps.checkSent)
          await outputs.incoming.publish(sent)
          return sent.map((e) => e.internalId)
        },
      })
      .finally(() => coalescer.ended())
    clearTimeout(showRunning)
    let outcome = decide(record, execution, policy, startedAt, Date.now())
    if (
      execution.kind === 'pause' &&
      execution.pause.kind === 'invoke' &&
      !deps.isServed(record.env, execution.pause.functionKey)
    ) {
      const error = {
        name: 'TypeError',
        code: 'INVOKE_UNKNOWN_FUNCTION',
        message: `step.invoke("${execution.stepId}"): no function "${execution.pause.functionKey}" is served in environment "${record.env}"`,
      }
      outcome = decide(
        record,
        { kind: 'error', stepId: execution.stepId, error, nonRetriable: true },
        policy,
        startedAt,
        Date.now(),
      )
    }
    stepDuration.observe({ function: fnLabel, outcome: outcome.kind }, secondsSince(startedNs))
    return outcome
  }

  /** Opens the state of partitions assigned, and reads back their queues. */
  async function assign(partitions: number[]): Promise<void> {
    // In parallel: each partition's restore reads its changelog (on kafkajs, through a group of its own).
    await Promise.all(
      partitions.map(async (p) => {
        const state = await deps.openState(p)
        states.set(p, state)
        await flow?.open(state)
        if (p === 0) cron.start(state)
      }),
    )
    timers.wake()
  }

  /** Closes the state of partitions taken away, once their executing steps ended. */
  async function revoke(partitions: number[]): Promise<void> {
    // Another runner now owns these runs; it executes what was not applied here.
    unapplied.clear()
    for (const p of partitions) {
      if (p === 0) await cron.stop()
      const state = states.get(p)
      states.delete(p)
      if (state && ![...states.values()].includes(state)) {
        await flow?.close(state)
        await state.close()
      }
    }
  }

  const consumer: TopicConsumer = { topic: config.inputTopic, handle, assign, revoke }

  /** Starts the timer loop and the pause watch. */
  function serve(): void {
    timers.start()
    hold.start()
  }

  return {
    /** What a consumer group shared with other functions drives (runner/consumer-groups.ts). */
    consumer,
    /** Reads the function's topic in a group of its own (`config.group`), and serves. */
    async start() {
      subscription = await subscribeConsumers(deps.bus, [consumer], {
        group: config.group,
        maxBatchRecords: config.maxBatchRecords,
        coPartitioned: false,
      })
      serve()
    },
    /** Serves a topic that a group shared with other functions reads: its subscription drives `consumer`. */
    serve,
    /** Stops its own group; a shared group is stopped before this. */
    async stop() {
      await subscription?.stop()
      await hold.stop()
      await flow?.stop()
      await cron.stop()
      await timers.stop()
    },
  }
}
