// The function runner's decisions, as pure functions (runner/plan.ts): each case is one record or
// signal of a run, what the runner knows of the run (its mark and parked record), and the actions
// planned. The applier (runner/function-runner.ts) and its I/O are covered by runner.test.ts and waits*.
import t from 'tap'
import type { FunctionRecord } from '../../core/run-record.ts'
import { planRecord, type Action, type PlanContext, type RunView } from '../../runner/plan.ts'
import { HELD } from '../../runner/hold.ts'
import { NOW, cancel, eventSignal, first, invokedSignal, mark, policy, view, waiting } from './plan-fixtures.ts'

const ctx: PlanContext = { nowMs: NOW, paused: false, policy }
const r0 = first()
const sleeping = waiting('sleep', r0)
const awaiting = waiting('event', r0)
const invoking = waiting('invoke', r0)
const retry = { ...r0, seq: 1, attempt: 1, attempts: 2, dueAt: NOW + 1000 }

interface Case {
  name: string
  view: RunView
  item: FunctionRecord
  ctx?: Partial<PlanContext>
  /** What the actions must match (t.match), in order. */
  want: Array<Record<string, unknown>>
}

const cases: Case[] = [
  {
    name: 'a new run executes its first record',
    view: view(mark(-1)),
    item: r0,
    want: [{ kind: 'execute', record: r0, of: r0 }],
  },
  {
    name: 'a record at or below the mark is a duplicate',
    view: view(mark(0)),
    item: r0,
    want: [{ kind: 'skip', why: 'duplicate' }],
  },
  {
    name: 'a record of a run marked cancelling ends it instead of executing',
    view: view(mark(-1, 'cancelling', { kind: 'api' })),
    item: r0,
    want: [{ kind: 'finish', record: r0, outcome: { kind: 'cancelled', run: { status: 'cancelled' } } }],
  },
  {
    name: "a paused function's new run is held",
    view: view(mark(-1)),
    item: r0,
    ctx: { paused: true },
    want: [{ kind: 'hold', record: { runId: r0.runId, queue: { key: HELD } } }],
  },
  {
    name: 'a released run is not held again',
    view: view(mark(-1)),
    item: { ...r0, released: true },
    ctx: { paused: true },
    want: [{ kind: 'execute' }],
  },
  {
    name: 'a paused function goes on with a run it started',
    view: view(mark(0)),
    item: { ...r0, seq: 1 },
    ctx: { paused: true },
    want: [{ kind: 'execute' }],
  },
  {
    name: 'a retry read before its due time is parked',
    view: view(mark(0)),
    item: retry,
    want: [{ kind: 'park', record: retry }],
  },
  {
    name: 'a retry read at its due time executes',
    view: view(mark(0)),
    item: retry,
    ctx: { nowMs: NOW + 1000 },
    want: [{ kind: 'execute', record: retry }],
  },
  {
    name: 'a sleep at its end executes on, the step completed with null',
    view: view(mark(0)),
    item: sleeping,
    ctx: { nowMs: sleeping.dueAt },
    want: [{ kind: 'execute', of: sleeping, record: { seq: 1, steps: [{ id: 'wait', output: null }] } }],
  },
  {
    name: 'a wait for an event at its timeout executes on with null',
    view: view(mark(0)),
    item: awaiting,
    ctx: { nowMs: awaiting.dueAt },
    want: [{ kind: 'execute', of: awaiting, record: { steps: [{ id: 'wait', output: null }] } }],
  },
  {
    name: 'an invocation at its timeout fails the run for good',
    view: view(mark(0)),
    item: invoking,
    ctx: { nowMs: invoking.dueAt },
    want: [
      { kind: 'finish', record: invoking, outcome: { kind: 'failed', run: { error: { code: 'INVOKE_TIMEOUT' } } } },
    ],
  },
  {
    name: 'a cancel ends a run at its parked record, which is let go',
    view: view(mark(0), sleeping),
    item: cancel(r0),
    want: [{ kind: 'finish', record: sleeping, outcome: { kind: 'cancelled' }, unpark: sleeping }],
  },
  {
    name: 'a cancel of a run with its step in flight marks it cancelling',
    view: view(mark(0)),
    item: cancel(r0),
    want: [{ kind: 'mark', runId: r0.runId, mark: { seq: 0, state: 'cancelling', cause: { kind: 'api' } } }],
  },
  {
    name: 'a parked record the mark passed is not cancelled again',
    view: view(mark(1), sleeping),
    item: cancel(r0),
    want: [{ kind: 'mark', mark: { seq: 1, state: 'cancelling' } }],
  },
  {
    name: 'a signal to a run that ended is dropped',
    view: view(mark(3, 'ended'), sleeping),
    item: cancel(r0),
    want: [{ kind: 'skip', why: 'run ended' }],
  },
  {
    name: 'the awaited event resumes the parked wait, completing its step with the event',
    view: view(mark(0), awaiting),
    item: eventSignal(awaiting),
    want: [
      {
        kind: 'execute',
        of: awaiting,
        unpark: awaiting,
        record: { steps: [{ id: 'wait', output: { name: 'shop/order.paid' } }] },
      },
    ],
  },
  {
    name: 'an event for a wait that ended already (timed out first) is dropped',
    view: view(mark(1), awaiting),
    item: eventSignal(awaiting),
    want: [{ kind: 'skip', why: 'pause ended already' }],
  },
  {
    name: 'an event when nothing is parked is dropped',
    view: view(mark(0)),
    item: eventSignal(awaiting),
    want: [{ kind: 'skip', why: 'nothing waits for it' }],
  },
  {
    name: "an invoked run's result completes the invoking step",
    view: view(mark(0), invoking),
    item: invokedSignal(invoking, { output: { total: 3 } }),
    want: [{ kind: 'execute', of: invoking, record: { steps: [{ id: 'wait', output: { total: 3 } }] } }],
  },
  {
    name: "an invoked run's failure fails the caller for good",
    view: view(mark(0), invoking),
    item: invokedSignal(invoking, { error: { name: 'Error', message: 'boom' } }),
    want: [{ kind: 'finish', record: invoking, unpark: invoking, outcome: { kind: 'failed' } }],
  },
  {
    name: 'a resumed wait of a run marked cancelling ends the run',
    view: view(mark(0, 'cancelling', { kind: 'api' }), awaiting),
    item: eventSignal(awaiting),
    want: [{ kind: 'finish', record: awaiting, unpark: awaiting, outcome: { kind: 'cancelled' } }],
  },
]

for (const c of cases)
  t.test(c.name, async (t) => {
    const actions: Action[] = planRecord(c.view, c.item, { ...ctx, ...c.ctx })
    t.equal(actions.length, c.want.length, 'as many actions as wanted')
    c.want.forEach((want, i) => t.match(actions[i], want))
  })

t.test('planning is pure: the same input plans the same actions, and the input is left as it was', async (t) => {
  const input = structuredClone(view(mark(0), awaiting))
  const item = eventSignal(awaiting)
  const once = planRecord(input, item, ctx)
  t.same(planRecord(input, item, ctx), once)
  t.same(input, view(mark(0), awaiting))
})
