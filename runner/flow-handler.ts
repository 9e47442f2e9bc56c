// The consumer side of a function with flow control (core/flow.ts). Nothing executes here: a batch is
// handled in order, records that may run go into the durable queue, and the scheduler
// (runner/scheduler.ts) executes them as concurrency and throttle allow, so a slow step never holds
// the partition. A run's first record passes the gate first (runner/gate.ts); cancels end what is
// parked or queued at once, and mark a run whose step is executing `cancelling`, as for any function.
import type { Logger } from 'pino'
import type { CancelCause } from '../core/run-doc.ts'
import { isSignal, snapshotOf, type FunctionRecord, type RunRecord } from '../core/run-record.ts'
import type { FlowControl } from '../core/flow.ts'
import type { FunctionSpec } from '../core/function.ts'
import type { Outcome } from './outcome.ts'
import { cancelled, skipped } from './cancel.ts'
import { resolveDue, resolveSignal, type Resolution } from './waits.ts'
import { NO_MARK, type RunMark, type RunnerState, type StateUpdate } from './state.ts'
import { createGate } from './gate.ts'
import { flowKeys } from '../core/flow-keys.ts'
import { createFlowView } from './flow-view.ts'
import { createScheduler, queuePlace } from './scheduler.ts'
import type { RunnerOutputs } from './apply.ts'
import type { Hold } from './hold.ts'

export interface FlowHandlerDeps {
  fn: FunctionSpec
  flow: FlowControl
  outputs: RunnerOutputs
  /** Executes a record (the runner's `execute`), applies an outcome once (its `applyOnce`). */
  execute(record: RunRecord): Promise<Outcome>
  applyOnce(record: RunRecord, outcome: Outcome): Promise<void>
  resolve(record: RunRecord, resolution: Resolution): Promise<Outcome>
  hold: Hold
  /** A parked record may be due sooner than the timer loop thinks. */
  wakeTimers(): void
  log: Logger
}

const ended = (o: Outcome) =>
  o.kind === 'completed' || o.kind === 'failed' || o.kind === 'cancelled' || o.kind === 'skipped'

export function createFlowHandler(deps: FlowHandlerDeps, config: { maxInFlight: number }) {
  const { fn, flow, log } = deps
  const gate = createGate(fn, flow)
  /** Runs a cancel reached while their step executes: their next record ends them. */
  const cancelling = new Map<string, CancelCause>()
  const scheduler = createScheduler({ flow, execute: runQueued, log }, config)

  /** Executes an admitted record and records it, in one write with its leaving the queue. */
  async function runQueued(state: RunnerState, record: RunRecord): Promise<void> {
    const [mark] = await state.processed([record.runId])
    if (record.seq <= mark.seq || mark.state === 'ended') {
      await state.save({ marks: [], parked: [], unparked: [], dequeued: [record] })
      return
    }
    const cause = cancelling.get(record.runId) ?? (mark.state === 'cancelling' ? mark.cause : undefined)
    const outcome = cause ? cancelled(record, cause, Date.now()) : await deps.execute(record)
    await deps.applyOnce(record, outcome)
    // A cancel that arrived while the step executed ends the run at its next record.
    const pending = cancelling.get(record.runId)
    const next: RunMark = ended(outcome)
      ? { seq: record.seq, state: 'ended' }
      : pending
        ? { seq: record.seq, state: 'cancelling', cause: pending }
        : { seq: record.seq, state: 'open' }
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
    const enqueue = (given: RunRecord) => {
      // A record made elsewhere (a retry from the REST API) gets its keys here.
      const r = given.flow ? given : { ...given, flow: flowKeys(flow, fn, given.event) }
      const queued = { ...r, queue: queuePlace(r) }
      queuedHere.set(r.runId, queued)
      update.queued!.push(queued)
    }
    /** Takes a run's parked or queued record (this batch's, or the state's) out, if any. */
    const takePending = async (runId: string, from: 'parked' | 'both'): Promise<RunRecord | null> => {
      const mark = marks.get(runId) ?? NO_MARK
      const here = parkedHere.get(runId) ?? (from === 'both' ? queuedHere.get(runId) : undefined)
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
      if (from === 'parked') return null
      const queued = scheduler.running(runId) ? null : await state.queuedOf(runId)
      if (queued && queued.seq > mark.seq) {
        update.dequeued!.push(queued)
        return queued
      }
      return null
    }
    /** A parked record replaced by another (a debounce's later event, a batch that filled up). */
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
    const cancel = async (runId: string, cause: CancelCause) => {
      const mark = marks.get(runId) ?? NO_MARK
      if (mark.state === 'ended') return
      const pending = await takePending(runId, 'both')
      if (pending) return finish(pending, cancelled(pending, cause, now()))
      // Its step executes now, or its next record is on its way: that record ends it.
      if (scheduler.running(runId)) cancelling.set(runId, cause)
      setMark(runId, { seq: mark.seq, state: 'cancelling', cause })
    }

    for (const item of items) {
      const mark = marks.get(item.runId) ?? NO_MARK
      if (isSignal(item)) {
        const { signal } = item
        if (mark.state === 'ended') continue
        if (signal.kind === 'cancel') {
          await cancel(item.runId, signal.cause)
          continue
        }
        if (signal.seq <= mark.seq) continue
        const parked = parkedHere.get(item.runId) ?? (await state.parkedOf(item.runId))
        const resolution = parked && parked.seq === signal.seq ? resolveSignal(parked, signal, now()) : null
        if (!resolution) continue
        await takePending(item.runId, 'parked')
        if (mark.state === 'cancelling') await finish(parked!, cancelled(parked!, mark.cause!, now()))
        else if (resolution.kind === 'fail') await finish(parked!, await deps.resolve(parked!, resolution))
        else enqueue(resolution.record)
        continue
      }
      const record = item
      if (record.seq <= mark.seq) continue
      if (mark.state === 'cancelling') {
        await finish(record, cancelled(record, mark.cause!, now()))
        continue
      }
      if (record.dueAt !== undefined && record.dueAt > now()) {
        park(record)
        continue
      }
      if (deps.hold.holds(record)) {
        update.queued!.push(deps.hold.held(record))
        continue
      }
      if (record.seq === 0 && (record.flow === undefined || record.gather)) {
        const decision = await gate.gate(record, view, now())
        switch (decision.kind) {
          case 'admit':
            if (decision.unpark) unpark(decision.unpark)
            // Runs gathered by debounce or batch were not shown queued by the router: they are now.
            if (record.gather || decision.record.events || fn.flow?.debounce)
              await deps.outputs.runs.publish([snapshotOf(decision.record, 'queued')])
            enqueue(decision.record)
            break
          case 'skip':
            await finish(decision.record, skipped(decision.record, decision.code, decision.message, now()))
            break
          case 'park': {
            if (decision.unpark) unpark(decision.unpark)
            if (decision.record.dueAt === undefined) enqueue(decision.record)
            else park(decision.record)
            // An event taken into another run (a batch) is consumed: a redelivery of it is dropped.
            if (decision.record.runId !== record.runId) setMark(record.runId, { seq: 0, state: 'ended' })
            break
          }
          case 'gathered':
            setMark(record.runId, { seq: 0, state: 'ended' })
            break
          case 'drop':
            break
          case 'replace':
            await cancel(decision.cancel, { kind: 'singleton', runId: record.runId })
            enqueue(decision.record)
            break
          default: {
            const unknown: never = decision
            throw new Error(`unknown gate decision ${JSON.stringify(unknown)}`)
          }
        }
        continue
      }
      if (record.waiting) {
        const resolution = resolveDue(record, now())
        if (resolution.kind === 'fail') await finish(record, await deps.resolve(record, resolution))
        else enqueue(resolution.record)
        continue
      }
      enqueue(record)
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
