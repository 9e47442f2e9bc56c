// What flow control does with a run's first record, before the run may start (core/flow.ts): a
// paused function holds it; idempotency, a rate limit or a singleton may skip it; debounce keeps only
// the last event of a burst; batching gathers events into one run. What passes waits in the queue for
// concurrency and throttle (runner/scheduler.ts). Decisions are values; state goes through a FlowView.
import { createHash } from 'node:crypto'
import type { EventRecord } from '../core/event.ts'
import { seededUlids, ulidTime } from '../core/ids.ts'
import { firstRecord, type RunRecord } from '../core/run-record.ts'
import { compileExpression } from '../core/expression.ts'
import type { FlowControl } from '../core/flow.ts'
import type { FunctionSpec } from '../core/function.ts'
import { asBinding, flowKeys } from '../core/flow-keys.ts'
import { gcra, type FlowView } from './flow-view.ts'

export type Gate =
  /** Runs when the scheduler admits it; `unpark`: a parked record it replaces (a debounce's earlier event). */
  | { kind: 'admit'; record: RunRecord; unpark?: RunRecord }
  /** Starts no run: the event is counted and shown with why. */
  | { kind: 'skip'; record: RunRecord; code: SkipCode; message: string }
  /** Held until its time (a debounce's quiet period, a batch's timeout); `unpark` is what it replaces. */
  | { kind: 'park'; record: RunRecord; unpark?: RunRecord }
  /** Taken into a batch that is not full yet. */
  | { kind: 'gathered' }
  /** A debounce or batch timer that came too late: a later event replaced it, or its batch ran. */
  | { kind: 'drop' }
  /** A run that replaces another one (singleton cancel), which the runner cancels. */
  | { kind: 'replace'; record: RunRecord; cancel: string }

export type SkipCode = 'RATE_LIMITED' | 'IDEMPOTENT' | 'SINGLETON_RUNNING'

const DAY_MS = 86_400_000

export function createGate(fn: FunctionSpec, flow: FlowControl) {
  const batchFilter = flow.batchEvents?.if === undefined ? undefined : compileExpression(flow.batchEvents.if, ['event'])

  /** A new run's first record, once per record (marks fence repeats). */
  async function gate(record: RunRecord, view: FlowView, nowMs: number): Promise<Gate> {
    const keys = record.flow ?? flowKeys(flow, fn, record.event)
    const run: RunRecord = { ...record, flow: keys }
    if (record.gather) return gathered(run, view, nowMs)
    if (keys.idempotency !== undefined) {
      const day = Math.floor(ulidTime(record.event.internalId) / DAY_MS)
      const seen = await Promise.all([day, day - 1].map((d) => view.get<number>(`idem\0${d}\0${keys.idempotency}`)))
      if (seen.some((at) => at !== null && nowMs - at < DAY_MS))
        return skip(run, 'IDEMPOTENT', `a run with idempotency key ${keys.idempotency} ran within 24 hours`)
      view.set(`idem\0${day}\0${keys.idempotency}`, nowMs)
    }
    if (flow.rateLimit && keys.rateLimit !== undefined) {
      const key = `rate\0${keys.rateLimit}`
      const { limit, periodMs } = flow.rateLimit
      const decision = gcra(await view.get<number>(key), nowMs, limit, periodMs, limit)
      if (!decision.allowed)
        return skip(
          run,
          'RATE_LIMITED',
          `over the rate limit of ${limit} per ${periodMs / 1000} s (key ${keys.rateLimit})`,
        )
      view.set(key, decision.next)
    }
    if (flow.singleton && keys.singleton !== undefined) {
      const key = `one\0${keys.singleton}`
      const active = await view.get<string>(key)
      view.set(key, active !== null && flow.singleton.mode === 'skip' ? active : record.runId)
      if (active !== null && active !== record.runId) {
        if (flow.singleton.mode === 'skip')
          return skip(run, 'SINGLETON_RUNNING', `run ${active} of the same singleton key is running`)
        return { kind: 'replace', record: run, cancel: active }
      }
    }
    if (flow.debounce && keys.debounce !== undefined) return debounce(run, view, nowMs)
    // A run that has its batch already (a replay of one) runs with it, not gathered again.
    if (flow.batchEvents && keys.batch !== undefined && !record.events) {
      if (batchFilter?.ok && !batchFilter.value({ event: asBinding(record.event) }))
        return { kind: 'admit', record: run }
      return batch(run, view, nowMs)
    }
    return { kind: 'admit', record: run }
  }

  /** The last event of a burst: parked until the quiet period ends (or the burst's timeout). */
  async function debounce(run: RunRecord, view: FlowView, nowMs: number): Promise<Gate> {
    const key = `debounce\0${run.flow!.debounce}`
    const pending = await view.get<{ record: RunRecord; firstAt: number }>(key)
    // Events of one key may come here out of the order they were accepted in (distributed mode: through
    // different partitions). The last accepted wins: one accepted earlier than the waiting one is taken.
    if (pending && pending.record.event.internalId > run.event.internalId) return { kind: 'gathered' }
    const firstAt = pending?.firstAt ?? nowMs
    const { periodMs, timeoutMs } = flow.debounce!
    const dueAt = Math.min(nowMs + periodMs, timeoutMs === undefined ? Number.POSITIVE_INFINITY : firstAt + timeoutMs)
    // The burst ran past its timeout: this event runs now (waiting for a quiet moment would never end).
    if (dueAt <= nowMs) {
      view.set(key, null)
      return { kind: 'admit', record: run, ...(pending && { unpark: pending.record }) }
    }
    const parked: RunRecord = { ...run, dueAt, gather: { kind: 'debounce', key } }
    view.set(key, { record: parked, firstAt })
    return { kind: 'park', record: parked, ...(pending && { unpark: pending.record }) }
  }

  /** Gathers events until `maxSize` (the batch runs now) or the timeout of its first (a parked timer). */
  async function batch(run: RunRecord, view: FlowView, nowMs: number): Promise<Gate> {
    const key = `batch\0${run.flow!.batch}`
    const open = await view.get<{ timer: RunRecord; events: EventRecord[] }>(key)
    if (open?.events.some((e) => e.internalId === run.event.internalId)) return { kind: 'gathered' }
    const events = [...(open?.events ?? []), run.event]
    const timer: RunRecord = open?.timer ?? {
      ...firstRecord(run.event, run.functionId, nowMs),
      runId: batchRunId(run),
      ...(run.routeKey !== undefined && { routeKey: run.routeKey }),
      flow: run.flow,
      dueAt: nowMs + flow.batchEvents!.timeoutMs,
      gather: { kind: 'batch', key },
    }
    if (events.length >= flow.batchEvents!.maxSize) {
      view.set(key, null)
      const { dueAt: _, gather: __, ...started } = timer
      return open ? { kind: 'park', record: { ...started, events }, unpark: timer } : admitBatch(started, events)
    }
    view.set(key, { timer, events })
    return open ? { kind: 'gathered' } : { kind: 'park', record: timer }
  }

  /** A parked debounce or batch record whose time came: the run starts, unless it was replaced. */
  async function gathered(run: RunRecord, view: FlowView, _nowMs: number): Promise<Gate> {
    const { kind, key } = run.gather!
    const { gather: _, ...started } = run
    if (kind === 'debounce') {
      const pending = await view.get<{ record: RunRecord }>(key)
      if (pending?.record.runId !== run.runId) return { kind: 'drop' } // a later event replaced it
      view.set(key, null)
      return { kind: 'admit', record: started }
    }
    const open = await view.get<{ timer: RunRecord; events: EventRecord[] }>(key)
    if (open?.timer.runId !== run.runId) return { kind: 'drop' } // it filled up and ran already
    view.set(key, null)
    return admitBatch(started, open.events)
  }

  return { gate }
}

function admitBatch(record: RunRecord, events: EventRecord[]): Gate {
  return { kind: 'admit', record: { ...record, event: events[0], events } }
}

/** A batch's run: from its first event and the function, so a timer and its batch agree. */
function batchRunId(first: RunRecord): string {
  const entropy = createHash('sha256').update(`${first.runId}\0batch`).digest().subarray(0, 10)
  return seededUlids(`${ulidTime(first.runId)},${entropy.toString('base64')}`, 1)[0]
}

function skip(record: RunRecord, code: SkipCode, message: string): Gate {
  return { kind: 'skip', record, code, message }
}
