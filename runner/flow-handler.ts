// The consumer side of a function with flow control (core/flow.ts). Nothing executes here: a batch is
// handled in order, records that may run go into the durable queue, and the scheduler
// (runner/scheduler.ts) executes them as concurrency and throttle allow, so a slow step never holds
// the partition. A run's first record passes the gate first (runner/gate.ts); cancels end what is
// parked or queued at once, and mark a run whose step is executing `cancelling`, as for any function.
// What to do is planned (runner/flow-plan.ts, pure); this file applies the actions: the state it reads
// and writes, the gate's view, the scheduler's queue.
import type { Logger } from 'pino'
import type { CancelCause } from '../core/run-doc.ts'
import { isSignal, type FunctionRecord, type RunRecord } from '../core/run-record.ts'
import type { FlowControl } from '../core/flow.ts'
import type { FunctionSpec } from '../core/function.ts'
import type { RetryPolicy } from '../core/retry.ts'
import type { Outcome } from './outcome.ts'
import { NO_MARK, type RunMark, type RunnerState, type StateUpdate } from './state.ts'
import { createGate } from './gate.ts'
import { createFlowView } from './flow-view.ts'
import { createScheduler } from './scheduler.ts'
import { ended, type Action } from './plan.ts'
import { markAfterQueued, planCancel, planFlowRecord, planGate, planQueued, type FlowPlanContext } from './flow-plan.ts'
import type { RunnerOutputs } from './apply.ts'
import type { Hold } from './hold.ts'

export interface FlowHandlerDeps {
  fn: FunctionSpec
  flow: FlowControl
  outputs: RunnerOutputs
  /** Executes a record (the runner's `execute`), applies an outcome once (its `applyOnce`). */
  execute(record: RunRecord): Promise<Outcome>
  applyOnce(record: RunRecord, outcome: Outcome): Promise<void>
  policy: RetryPolicy
  hold: Hold
  /** A parked record may be due sooner than the timer loop thinks. */
  wakeTimers(): void
  log: Logger
}

export function createFlowHandler(deps: FlowHandlerDeps, config: { maxInFlight: number }) {
  const { fn, flow, log } = deps
  const gate = createGate(fn, flow)
  /** Runs a cancel reached while their step executes: their next record ends them. */
  const cancelling = new Map<string, CancelCause>()
  const scheduler = createScheduler({ flow, execute: runQueued, log }, config)

  /** Executes an admitted record and records it, in one write with its leaving the queue. */
  async function runQueued(state: RunnerState, record: RunRecord): Promise<void> {
    const [mark] = await state.processed([record.runId])
    const cause = cancelling.get(record.runId) ?? (mark.state === 'cancelling' ? mark.cause : undefined)
    const action = planQueued(mark, cause, record, Date.now())
    if (action.kind === 'skip') {
      await state.save({ marks: [], parked: [], unparked: [], dequeued: [record] })
      return
    }
    const outcome = action.kind === 'execute' ? await deps.execute(record) : action.outcome
    await deps.applyOnce(record, outcome)
    // A cancel that arrived while the step executed ends the run at its next record.
    const next = markAfterQueued(record, outcome, cancelling.get(record.runId))
    if (ended(outcome)) cancelling.delete(record.runId)
    await state.save({
      marks: [{ runId: record.runId, mark: next }],
      parked: [],
      unparked: [],
      dequeued: [record],
      flow: ended(outcome) ? await releaseSingleton(state, record) : [],
    })
  }

  /** A singleton key held by a run that ended is free again. */
  async function releaseSingleton(state: RunnerState, record: RunRecord) {
    const key = record.flow?.singleton
    if (key === undefined) return []
    const [held] = await state.flowGet([`one\0${key}`])
    return held === JSON.stringify(record.runId) ? [{ key: `one\0${key}`, value: null }] : []
  }

  async function handle(state: RunnerState, items: FunctionRecord[]): Promise<void> {
    const view = createFlowView(state)
    const update: StateUpdate = { marks: [], parked: [], unparked: [], queued: [], dequeued: [] }
    const runIds = [...new Set(items.map((i) => i.runId))]
    const marks = new Map((await state.processed(runIds)).map((m, i) => [runIds[i], m]))
    const parkedHere = new Map<string, RunRecord>()
    const queuedHere = new Map<string, RunRecord>()
    const now = () => Date.now()

    const setMark = (runId: string, mark: RunMark) => {
      marks.set(runId, mark)
      const at = update.marks.findIndex((m) => m.runId === runId)
      if (at >= 0) update.marks[at] = { runId, mark }
      else update.marks.push({ runId, mark })
    }
    const park = (r: RunRecord) => {
      parkedHere.set(r.runId, r)
      update.parked.push(r)
    }
    /** Takes a run's parked or queued record (this batch's, or the state's) out, if any. */
    const takePending = async (runId: string): Promise<RunRecord | null> => {
      const mark = marks.get(runId) ?? NO_MARK
      const here = parkedHere.get(runId) ?? queuedHere.get(runId)
      if (here) {
        for (const list of [update.parked, update.queued!]) if (list.includes(here)) list.splice(list.indexOf(here), 1)
        parkedHere.delete(runId)
        queuedHere.delete(runId)
        return here
      }
      const parked = await state.parkedOf(runId)
      if (parked && parked.seq > mark.seq) {
        update.unparked.push(parked)
        return parked
      }
      const queued = scheduler.running(runId) ? null : await state.queuedOf(runId)
      if (queued && queued.seq > mark.seq) {
        update.dequeued!.push(queued)
        return queued
      }
      return null
    }
    /** A parked record resumed, or replaced by another (a debounce's later event, a batch that filled up). */
    const unpark = (replaced: RunRecord) => {
      const here = parkedHere.get(replaced.runId)
      if (here) {
        update.parked.splice(update.parked.indexOf(here), 1)
        parkedHere.delete(replaced.runId)
      } else update.unparked.push(replaced)
    }
    const finish = async (record: RunRecord, outcome: Outcome) => {
      await deps.applyOnce(record, outcome)
      setMark(record.runId, { seq: record.seq, state: ended(outcome) ? 'ended' : 'open' })
      if (ended(outcome)) for (const w of await releaseSingleton(state, record)) view.set(w.key, null)
    }
    const context = (): FlowPlanContext => ({ nowMs: now(), paused: deps.hold.paused(), policy: deps.policy, fn, flow })

    async function run(action: Action): Promise<void> {
      switch (action.kind) {
        case 'skip':
          return
        case 'finish':
          return finish(action.record, action.outcome)
        case 'park':
          return park(action.record)
        case 'unpark':
          return unpark(action.record)
        case 'queue':
          queuedHere.set(action.record.runId, action.record)
          update.queued!.push(action.record)
          return
        case 'hold':
          update.queued!.push(action.record)
          return
        case 'mark':
          return setMark(action.runId, action.mark)
        case 'show':
          await deps.outputs.runs.publish([action.run])
          return
        case 'gate': {
          const decision = await gate.gate(action.record, view, now())
          for (const next of planGate(decision, action.record, context())) await run(next)
          return
        }
        case 'cancel': {
          const mark = marks.get(action.runId) ?? NO_MARK
          const pending = mark.state === 'ended' ? null : await takePending(action.runId)
          const planned = planCancel(
            { mark, pending, running: scheduler.running(action.runId) },
            action.runId,
            action.cause,
            now(),
          )
          for (const next of planned) await run(next)
          return
        }
        case 'cancel-in-flight':
          cancelling.set(action.runId, action.cause)
          return
        case 'execute':
          throw new Error('a function with flow control executes only what its scheduler admits')
        default: {
          const unknown: never = action
          throw new Error(`unknown action ${JSON.stringify(unknown)}`)
        }
      }
    }

    for (const item of items) {
      const mark = marks.get(item.runId) ?? NO_MARK
      // Only a signal looks for the run's parked record (parked by this batch, or before).
      const parked = parkedHere.get(item.runId) ?? (isSignal(item) ? await state.parkedOf(item.runId) : null)
      for (const action of planFlowRecord({ mark, parked }, item, context())) await run(action)
    }
    update.flow = view.take()
    await state.save(update)
    if (update.parked.length > 0) deps.wakeTimers()
    scheduler.dequeued(state, update.dequeued!)
    scheduler.queued(state, update.queued!)
  }

  return {
    handle,
    open: (state: RunnerState) => scheduler.open(state),
    close: (state: RunnerState) => scheduler.close(state),
    stop: () => scheduler.stop(),
  }
}
