// The execution engine and the retry decision, without a bus: what one execution of a run
// record does, and what the runner makes of it.
import t from 'tap'
import { executeFunction } from '../../client/step.ts'
import type { ExecutionInput } from '../../core/execution.ts'
import { defineFunction, type FunctionHandler } from '../../client/function.ts'
import { NonRetriableError } from '../../client/errors.ts'
import { decide, FUNCTION_BACKOFF } from '../../runner/outcome.ts'
import { firstRecord, runIdFor, sentEventIds, type RunRecord } from '../../core/run-record.ts'
import { newUlid } from '../../core/ids.ts'
import type { EventRecord } from '../../core/event.ts'

const event: EventRecord = {
  internalId: newUlid(),
  id: 'e-1',
  name: 'test/x',
  data: {},
  ts: 1,
  env: 'production',
  receivedAt: 1,
  source: { kind: 'api' },
}
const silent = { debug() {}, info() {}, warn() {}, error() {} }
const input = (steps: ExecutionInput['steps'] = [], sent: string[][] = []): ExecutionInput => ({
  event: { ...event },
  events: [{ ...event }],
  runId: 'run',
  attempt: 0,
  steps,
  logger: silent,
  sendEvents: async (stepId, events) => {
    sent.push([stepId, ...events.map((e) => e.name)])
    return events.map((_, i) => `${stepId}-${i}`)
  },
})
const fnOf = (handler: FunctionHandler, retries?: number) =>
  defineFunction({ id: 'app' }, { id: 'f', retries }, { event: 'test/x' }, handler)

t.test('memoised steps are replayed without running; the first new step runs and ends the execution', async (t) => {
  const ran: string[] = []
  const fn = fnOf(async ({ step }) => {
    const a = await step.run('a', () => {
      ran.push('a')
      return 1
    })
    const b = await step.run('b', () => {
      ran.push('b')
      return a + 1
    })
    ran.push('after b')
    return b
  })
  t.match(
    await executeFunction(fn, input([{ id: 'a', output: 1 }])),
    { kind: 'step', stepId: 'b', output: 2, durationMs: Number },
    'b ran',
  )
  t.same(ran, ['b'], 'a was replayed, the code after b never ran')
  t.same(
    await executeFunction(
      fn,
      input([
        { id: 'a', output: 1 },
        { id: 'b', output: 2 },
      ]),
    ),
    { kind: 'completed', output: 2 },
  )
})

t.test("a user's try/catch around a step cannot swallow the interruption", async (t) => {
  let caught = 0
  const fn = fnOf(async ({ step }) => {
    try {
      await step.run('a', () => 'A')
    } catch {
      caught++
    }
    return 'unreachable in the first execution'
  })
  const first = await executeFunction(fn, input())
  t.equal(first.kind, 'step')
  t.equal(caught, 0)
})

t.test('parallel new steps are taken one per execution, in call order', async (t) => {
  const fn = fnOf(async ({ step }) => Promise.all([step.run('a', () => 'A'), step.run('b', () => 'B')]))
  const first = await executeFunction(fn, input())
  t.match(first, { kind: 'step', stepId: 'a', output: 'A' })
  const second = await executeFunction(fn, input([{ id: 'a', output: 'A' }]))
  t.match(second, { kind: 'step', stepId: 'b', output: 'B' })
  t.same(
    await executeFunction(
      fn,
      input([
        { id: 'a', output: 'A' },
        { id: 'b', output: 'B' },
      ]),
    ),
    { kind: 'completed', output: ['A', 'B'] },
  )
})

t.test('a step ID used twice keeps both results, under a suffixed ID', async (t) => {
  const fn = fnOf(async ({ step }) => [await step.run('x', () => 1), await step.run('x', () => 2)])
  t.match(await executeFunction(fn, input([{ id: 'x', output: 1 }])), { kind: 'step', stepId: 'x:1', output: 2 })
})

t.test('step results are JSON; a result that cannot be JSON fails without retry', async (t) => {
  const dated = fnOf(async ({ step }) => step.run('when', () => ({ at: new Date(0), none: undefined })))
  t.match(await executeFunction(dated, input()), { kind: 'step', output: { at: '1970-01-01T00:00:00.000Z' } })
  const big = fnOf(async ({ step }) => step.run('big', () => 10n))
  t.match(await executeFunction(big, input()), {
    kind: 'error',
    stepId: 'big',
    nonRetriable: true,
    error: { name: 'TypeError' },
  })
  t.same(
    await executeFunction(
      fnOf(async () => undefined),
      input(),
    ),
    { kind: 'completed', output: null },
  )
})

t.test('errors are classified by code: NonRetriableError from any copy of the client stops at once', async (t) => {
  const own = await executeFunction(
    fnOf(async () => {
      throw new NonRetriableError('no')
    }),
    input(),
  )
  t.match(own, {
    kind: 'error',
    nonRetriable: true,
    error: { name: 'NonRetriableError', message: 'no', code: 'NON_RETRIABLE' },
  })
  const foreign = Object.assign(new Error('from another copy'), { code: 'NON_RETRIABLE' })
  t.match(
    await executeFunction(
      fnOf(async () => {
        throw foreign
      }),
      input(),
    ),
    { kind: 'error', nonRetriable: true },
  )
  t.match(
    await executeFunction(
      fnOf(async ({ step }) =>
        step.run('s', () => {
          throw new Error('flaky')
        }),
      ),
      input(),
    ),
    { kind: 'error', stepId: 's', nonRetriable: false },
  )
})

t.test('step.sendEvent is a step: it sends once and its IDs are memoised', async (t) => {
  const sent: string[][] = []
  const fn = fnOf(async ({ step }) =>
    step.sendEvent('notify', [
      { name: 'a/b', data: {} },
      { name: 'a/c', data: {} },
    ]),
  )
  t.match(await executeFunction(fn, input([], sent)), {
    kind: 'step',
    stepId: 'notify',
    output: { ids: ['notify-0', 'notify-1'] },
  })
  t.same(sent, [['notify', 'a/b', 'a/c']])
  t.same(await executeFunction(fn, input([{ id: 'notify', output: { ids: ['notify-0', 'notify-1'] } }], sent)), {
    kind: 'completed',
    output: { ids: ['notify-0', 'notify-1'] },
  })
  t.equal(sent.length, 1, 'the replay sent nothing')
})

t.test('run IDs and sent event IDs are deterministic', async (t) => {
  t.equal(runIdFor(event, 'app-f'), runIdFor({ ...event }, 'app-f'))
  t.not(runIdFor(event, 'app-f'), runIdFor(event, 'app-g'))
  t.not(runIdFor(event, 'app-f'), runIdFor({ ...event, env: 'staging' }, 'app-f'))
  const runId = runIdFor(event, 'app-f')
  t.same(sentEventIds(runId, 'notify', 2), sentEventIds(runId, 'notify', 2))
  t.not(sentEventIds(runId, 'notify', 1)[0], sentEventIds(runId, 'other', 1)[0])
  t.equal(runId.slice(0, 10), event.internalId.slice(0, 10), "a run ID carries its event's time")
})

t.test(
  'the decision: checkpoint, retry with backoff, fail when attempts run out or on NonRetriableError',
  async (t) => {
    const policy = { ...FUNCTION_BACKOFF, retries: 2 }
    const record: RunRecord = firstRecord(event, 'app-f', 1_000)
    const step = decide(record, { kind: 'step', stepId: 'a', output: 1, durationMs: 3 }, policy, 2_000, 2_005)
    t.match(step, {
      kind: 'continue',
      next: {
        seq: 1,
        attempt: 0,
        attempts: 1,
        startedAt: 2_000,
        steps: [{ id: 'a', output: 1, attempts: 1, endedAt: 2_005 }],
      },
    })
    const error = { kind: 'error' as const, stepId: 'b', error: { name: 'Error', message: 'x' }, nonRetriable: false }
    const retry = decide(record, error, policy, 2_000, 3_000)
    if (retry.kind !== 'retry') throw new Error('expected a retry')
    t.match(retry.next, { seq: 1, attempt: 1, attempts: 2, failing: { stepId: 'b', error: { message: 'x' } } })
    t.ok(retry.next.dueAt! >= 3_800 && retry.next.dueAt! <= 4_200, 'first retry after 1 s ± 20%')
    const exhausted = decide({ ...retry.next, attempt: 2, dueAt: undefined }, error, policy, 2_000, 9_000)
    t.match(exhausted, {
      kind: 'failed',
      run: {
        status: 'failed',
        error: { message: 'x' },
        version: 4,
        steps: [{ id: 'b', status: 'failed', attempts: 3 }],
      },
    })
    t.match(decide(record, { ...error, nonRetriable: true }, policy, 2_000, 3_000), {
      kind: 'failed',
      run: { attempts: 1 },
    })
    t.match(decide(retry.next, { kind: 'completed', output: 'ok' }, policy, 2_000, 5_000), {
      kind: 'completed',
      run: { status: 'completed', output: 'ok', attempts: 2, version: 4 },
    })
    const completed = decide(retry.next, { kind: 'completed', output: 'ok' }, policy, 2_000, 5_000)
    t.notOk(
      'nextAttemptAt' in (completed.kind === 'completed' ? completed.run : {}),
      'a finished run has no pending attempt',
    )
  },
)
