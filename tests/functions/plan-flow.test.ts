// The flow handler's decisions, as pure functions (runner/flow-plan.ts): a record or signal of a run of
// a function with flow control, the gate's decision on a run's first record, a cancel once the run's
// pending record was looked for, and a record the scheduler admitted. The gate (runner/gate.ts) and the
// applier with its queue are covered by flow.test.ts and flow-crash.test.ts.
import t, { type Test } from 'tap'
import type { FlowControl } from '../../core/flow.ts'
import type { FunctionRecord, RunRecord } from '../../core/run-record.ts'
import type { Action, RunView } from '../../runner/plan.ts'
import type { Gate } from '../../runner/gate.ts'
import {
  markAfterQueued,
  planCancel,
  planFlowRecord,
  planGate,
  planQueued,
  type FlowPlanContext,
} from '../../runner/flow-plan.ts'
import { HELD } from '../../runner/hold.ts'
import { NOW, cancel, event, eventSignal, first, functionSpec, mark, policy, view, waiting } from './plan-fixtures.ts'

const flow: FlowControl = { concurrency: [{ limit: 2, key: 'event.data.orderId', scope: 'fn' }] }
const fn = functionSpec(flow)
const ctx: FlowPlanContext = { nowMs: NOW, paused: false, policy, fn, flow }
const r0 = first()
const keyed: RunRecord = { ...r0, flow: { slots: [{ id: 'fn0\u00007', limit: 2 }], priorityMs: 0 } }
const r1 = { ...keyed, seq: 1, steps: [{ id: 'a', output: 1, attempts: 1, endedAt: NOW }] }
const awaiting = waiting('event', keyed)
const invoking = waiting('invoke', keyed)

const check = (t: Test, actions: Action[], want: Array<Record<string, unknown>>) => {
  t.equal(actions.length, want.length, 'as many actions as wanted')
  want.forEach((w, i) => t.match(actions[i], w))
}

const records: Array<{
  name: string
  view: RunView
  item: FunctionRecord
  ctx?: Partial<FlowPlanContext>
  want: Array<Record<string, unknown>>
}> = [
  {
    name: "a run's first record passes the gate",
    view: view(mark(-1)),
    item: r0,
    want: [{ kind: 'gate', record: r0 }],
  },
  {
    name: "a record the router keyed goes straight to the queue, in its key's place",
    view: view(mark(0)),
    item: r1,
    want: [{ kind: 'queue', record: { seq: 1, queue: { key: '7', order: r1.queuedAt } } }],
  },
  {
    name: 'a record made elsewhere (a retry from the REST API) gets its flow keys',
    view: view(mark(0)),
    item: { ...r0, seq: 1 },
    want: [{ kind: 'queue', record: { flow: { slots: [{ id: 'fn0\u00007', limit: 2 }] }, queue: { key: '7' } } }],
  },
  { name: 'a duplicate is dropped', view: view(mark(1)), item: r1, want: [{ kind: 'skip', why: 'duplicate' }] },
  {
    name: 'a record before its due time is parked (checked before the hold)',
    view: view(mark(-1)),
    item: { ...r0, dueAt: NOW + 5 },
    ctx: { paused: true },
    want: [{ kind: 'park' }],
  },
  {
    name: "a paused function's new run is held",
    view: view(mark(-1)),
    item: r0,
    ctx: { paused: true },
    want: [{ kind: 'hold', record: { queue: { key: HELD } } }],
  },
  {
    name: 'a record of a run marked cancelling ends it',
    view: view(mark(0, 'cancelling', { kind: 'api' })),
    item: r1,
    want: [{ kind: 'finish', record: r1, outcome: { kind: 'cancelled' } }],
  },
  {
    name: 'a cancel is planned once the pending record is looked for',
    view: view(mark(0)),
    item: cancel(r0),
    want: [{ kind: 'cancel', runId: r0.runId, cause: { kind: 'api' } }],
  },
  {
    name: 'a cancel of a run that ended is dropped',
    view: view(mark(2, 'ended')),
    item: cancel(r0),
    want: [{ kind: 'skip', why: 'run ended' }],
  },
  {
    name: 'the awaited event unparks the wait and queues its resumed record',
    view: view(mark(0), awaiting),
    item: eventSignal(awaiting),
    want: [
      { kind: 'unpark', record: awaiting },
      { kind: 'queue', record: { seq: 1, steps: [{ id: 'wait' }] } },
    ],
  },
  {
    name: 'a resumed wait of a run marked cancelling ends the run',
    view: view(mark(0, 'cancelling', { kind: 'api' }), awaiting),
    item: eventSignal(awaiting),
    want: [{ kind: 'unpark' }, { kind: 'finish', record: awaiting, outcome: { kind: 'cancelled' } }],
  },
  {
    name: 'a wait at its timeout is queued to execute on',
    view: view(mark(0)),
    item: awaiting,
    ctx: { nowMs: awaiting.dueAt },
    want: [{ kind: 'queue', record: { steps: [{ id: 'wait', output: null }] } }],
  },
  {
    name: 'an invocation at its timeout fails at once, never queued',
    view: view(mark(0)),
    item: invoking,
    ctx: { nowMs: invoking.dueAt },
    want: [{ kind: 'finish', record: invoking, outcome: { kind: 'failed' } }],
  },
]
for (const c of records)
  t.test(c.name, async (t) => check(t, planFlowRecord(c.view, c.item, { ...ctx, ...c.ctx }), c.want))

const other = first(event())
const gates: Array<{
  name: string
  decision: Gate
  record?: RunRecord
  ctx?: Partial<FlowPlanContext>
  want: Array<Record<string, unknown>>
}> = [
  {
    name: 'admitted: queued',
    decision: { kind: 'admit', record: keyed },
    want: [{ kind: 'queue', record: { runId: r0.runId } }],
  },
  {
    name: 'admitted after a debounce: the earlier record is let go and the run shown queued',
    decision: { kind: 'admit', record: keyed, unpark: other },
    ctx: { flow: { ...flow, debounce: { periodMs: 1000 } } },
    want: [{ kind: 'unpark', record: other }, { kind: 'show', run: { status: 'queued' } }, { kind: 'queue' }],
  },
  {
    name: 'skipped (a rate limit): the run ends skipped, with why',
    decision: { kind: 'skip', record: keyed, code: 'RATE_LIMITED', message: 'over the rate limit' },
    want: [{ kind: 'finish', outcome: { kind: 'skipped', run: { error: { code: 'RATE_LIMITED' } } } }],
  },
  {
    name: "parked until its time (a debounce), replacing the burst's earlier record",
    decision: { kind: 'park', record: { ...keyed, dueAt: NOW + 1000 }, unpark: other },
    want: [
      { kind: 'unpark', record: other },
      { kind: 'park', record: { dueAt: NOW + 1000 } },
    ],
  },
  {
    name: "a full batch: its timer is let go, the batch queued, the event's own run marked ended",
    decision: { kind: 'park', record: { ...keyed, runId: other.runId, events: [] }, unpark: other },
    want: [{ kind: 'unpark' }, { kind: 'queue' }, { kind: 'mark', runId: r0.runId, mark: { seq: 0, state: 'ended' } }],
  },
  {
    name: 'gathered into a batch: the run is marked ended',
    decision: { kind: 'gathered' },
    want: [{ kind: 'mark', mark: { seq: 0, state: 'ended' } }],
  },
  { name: 'a replaced timer is dropped', decision: { kind: 'drop' }, want: [{ kind: 'skip' }] },
  {
    name: 'a singleton in cancel mode cancels the running one, then queues',
    decision: { kind: 'replace', record: keyed, cancel: other.runId },
    want: [{ kind: 'cancel', runId: other.runId, cause: { kind: 'singleton', runId: r0.runId } }, { kind: 'queue' }],
  },
]
for (const c of gates)
  t.test(`gate: ${c.name}`, async (t) => check(t, planGate(c.decision, c.record ?? r0, { ...ctx, ...c.ctx }), c.want))

t.test('cancel: a pending record ends the run at once', async (t) =>
  check(t, planCancel({ mark: mark(0), pending: r1, running: false }, r0.runId, { kind: 'api' }, NOW), [
    { kind: 'finish', record: r1, outcome: { kind: 'cancelled' } },
  ]),
)
t.test('cancel: a step executing now is ended by the record it leads to', async (t) =>
  check(t, planCancel({ mark: mark(0), pending: null, running: true }, r0.runId, { kind: 'api' }, NOW), [
    { kind: 'cancel-in-flight', runId: r0.runId },
    { kind: 'mark', mark: { seq: 0, state: 'cancelling' } },
  ]),
)
t.test('cancel: nothing pending nor executing marks the run cancelling', async (t) =>
  check(t, planCancel({ mark: mark(0), pending: null, running: false }, r0.runId, { kind: 'api' }, NOW), [
    { kind: 'mark', mark: { state: 'cancelling' } },
  ]),
)

t.test(
  'admitted: executed, dropped as a duplicate, a retry of an ended run executed, or ended by a cancel',
  async (t) => {
    t.match(planQueued(mark(0), undefined, r1, NOW), { kind: 'execute', record: r1 })
    t.match(planQueued(mark(1), undefined, r1, NOW), { kind: 'skip', why: 'duplicate' })
    t.match(planQueued(mark(1, 'ended'), undefined, r1, NOW), { kind: 'skip', why: 'duplicate' })
    t.match(planQueued(mark(0, 'ended'), undefined, r1, NOW), { kind: 'execute', record: r1 }, 'a retry runs')
    t.match(planQueued(mark(0), { kind: 'api' }, r1, NOW), { kind: 'finish', outcome: { kind: 'cancelled' } })
  },
)

t.test('admitted: the mark after its outcome, cancelling when a cancel arrived meanwhile', async (t) => {
  const next = { kind: 'continue' as const, next: { ...r1, seq: 2 } }
  t.same(markAfterQueued(r1, next, undefined), { seq: 1, state: 'open' })
  t.same(markAfterQueued(r1, next, { kind: 'api' }), { seq: 1, state: 'cancelling', cause: { kind: 'api' } })
  t.same(markAfterQueued(r1, { kind: 'completed', run: {} as never }, { kind: 'api' }), { seq: 1, state: 'ended' })
})
