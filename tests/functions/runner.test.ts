// The runner stage on the local log (a real RocksDB), with its outputs captured: duplicates
// are fenced, sent event IDs are deterministic, and retries wait off the partition, durably.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import pino from 'pino'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { newUlid } from '../../core/ids.ts'
import type { EventRecord } from '../../core/event.ts'
import { createLocalBus } from '../../bus/local.ts'
import { jsonCodec } from '../../bus/codec.ts'
import { createOutput, type Output } from '../../bus/output.ts'
import { defineFunction, type FunctionHandler } from '../../client/function.ts'
import { createFunctionRunner } from '../../runner/function-runner.ts'
import { inProcessExecutor } from '../../runner/executor.ts'
import { createRocksRunnerState } from '../../runner/rocksdb.ts'
import { FUNCTION_BACKOFF } from '../../runner/outcome.ts'
import { firstRecord, type FunctionRecord, type RunRecord } from '../../core/run-record.ts'
import { NO_MARK, type RunnerState } from '../../runner/state.ts'
import type { RunDoc } from '../../store/runs-types.ts'
import { eventually, removeDir, tempDir } from '../helpers/server.ts'

class Captured<T> implements Output<T> {
  readonly values: T[] = []
  async publish(values: T[]): Promise<void> {
    this.values.push(...values)
  }
}

/** Refuses its first `failures` publishes, as Kafka does while a partition's leader moves. */
class Refusing<T> extends Captured<T> {
  refused = 0
  readonly failures: number
  constructor(failures: number) {
    super()
    this.failures = failures
  }
  override async publish(values: T[]): Promise<void> {
    if (this.refused < this.failures) {
      this.refused++
      throw new Error('the log cannot take records right now')
    }
    await super.publish(values)
  }
}

const dir = await tempDir()
const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
const log = pino({ level: 'silent' })
const bus = createLocalBus(rocks, log, { maxBatchRecords: 100, retentionCheckMs: 60_000 })
t.teardown(async () => {
  await bus.close()
  await rocks.close()
  await removeDir(dir)
})
const codec = jsonCodec<FunctionRecord>()
const limits = { maxEvents: 100, maxJsonDepth: 16, maxNameLength: 256, maxIdLength: 256 }
let topics = 0

/** A runner for `handler` on a fresh one-partition topic; `state` defaults to the RocksDB one. */
async function serve(
  t: Test,
  handler: FunctionHandler,
  options: {
    state?: RunnerState
    topic?: string
    backoffMs?: number
    runs?: Captured<RunDoc>
    /** Asked before each publish of the runner to its own topic: true refuses it, as a Kafka outage would. */
    refuseSelf?: () => boolean
  } = {},
) {
  const topic = options.topic ?? `fn-${++topics}`
  await bus.ensureTopics({ [topic]: { partitions: 1 } })
  const fn = defineFunction({ id: 'app' }, { id: topic, retries: 2 }, { event: 'test/x' }, handler)
  const self = createOutput(bus, topic, codec, (r) => r.runId)
  const runs = options.runs ?? new Captured<RunDoc>()
  const incoming = new Captured<EventRecord>()
  const runner = createFunctionRunner(
    {
      bus,
      fn,
      execute: inProcessExecutor(fn),
      codec,
      outputs: {
        self: {
          publish: async (values) => {
            if (options.refuseSelf?.()) throw new Error('the log cannot take records right now')
            await self.publish(values)
          },
        },
        runs,
        incoming,
        functionRuns: () => self,
        waits: { register: async () => {}, remove: async () => {} },
      },
      isServed: () => true,
      pauseOf: () => undefined,
      openState: async () => options.state ?? createRocksRunnerState(rocks, topic),
      log,
    },
    {
      inputTopic: topic,
      group: `runner-${topic}`,
      backoff: { ...FUNCTION_BACKOFF, initialDelayMs: options.backoffMs ?? 300 },
      eventLimits: limits,
      markRetentionMs: 60_000,
      maxBatchRecords: 100,
    },
  )
  await runner.start()
  t.teardown(() => runner.stop())
  const finished = (runId: string) =>
    eventually(async () =>
      runs.values.find((r) => r.runId === runId && (r.status === 'completed' || r.status === 'failed')),
    )
  return { topic, self, runs, incoming, runner, finished, fn }
}

const eventNamed = (data: Record<string, unknown> = {}): EventRecord => {
  const id = newUlid()
  return {
    internalId: id,
    id,
    name: 'test/x',
    data,
    ts: Date.now(),
    env: 'production',
    receivedAt: Date.now(),
    source: { kind: 'api' },
  }
}

t.test('a redelivered record of a run is dropped: the handler runs once', async (t) => {
  const executions = new Map<string, number>()
  const { self, finished } = await serve(
    t,
    async ({ event }) => executions.set(event.internalId, (executions.get(event.internalId) ?? 0) + 1).size,
  )
  const event = eventNamed()
  const record = firstRecord(event, 'app-f', Date.now())
  await self.publish([record, record]) // a duplicate in the same batch
  await finished(record.runId)
  await self.publish([record]) // and one in a later batch, after the run finished
  const marker = firstRecord(eventNamed(), 'app-f', Date.now())
  await self.publish([marker])
  await finished(marker.runId) // one partition: the duplicate was consumed before this
  t.equal(executions.get(event.internalId), 1)
})

t.test('a step whose outcome the log refuses is not executed again when its batch is redelivered', async (t) => {
  let executions = 0
  const runs = new Refusing<RunDoc>(3)
  const { self, finished } = await serve(t, async ({ step }) => step.run('charge', () => ++executions), { runs })
  const record = firstRecord(eventNamed(), 'app-f', Date.now())
  await self.publish([record])
  const run = await finished(record.runId)
  t.equal(runs.refused, 3, "the log refused the step's checkpoint three times")
  t.equal(executions, 1, 'the step ran once')
  t.equal(run.status, 'completed')
})

t.test('a resumed run whose next record the log refuses resumes when its signal is redelivered', async (t) => {
  let charged = 0
  let refusals = 0
  const { self, runs, finished } = await serve(
    t,
    async ({ step }) => {
      const paid = await step.waitForEvent('paid', { event: 'test/paid', timeout: '1h' })
      await step.run('charge', () => ++charged)
      return paid?.data
    },
    { refuseSelf: () => refusals > 0 && refusals-- > 0 },
  )
  const record = firstRecord(eventNamed(), 'app-f', Date.now())
  await self.publish([record])
  await eventually(async () => runs.values.find((r) => r.runId === record.runId && r.status === 'waiting'))
  // The waiting record is parked before the signal comes: it is the record after the wait's step.
  await new Promise((r) => setTimeout(r, 200))
  refusals = 2
  const paid = { ...eventNamed({ amount: 7 }), name: 'test/paid' }
  await self.publish([{ runId: record.runId, signal: { kind: 'event', seq: 1, event: paid } }])
  const run = await finished(record.runId)
  t.equal(refusals, 0, 'the log refused the resumed run twice')
  t.equal(run.status, 'completed')
  t.same(run.output, { amount: 7 }, 'with the awaited event')
  t.equal(charged, 1, 'the step after the wait ran once')
})

t.test('a step re-executed because its mark was lost sends the same event IDs, which dedup drops', async (t) => {
  const real = createRocksRunnerState(rocks, 'forgetful')
  // A crash between publishing a step's checkpoint and saving the mark: the mark is never saved.
  const forgetful: RunnerState = {
    ...real,
    processed: async (ids) => ids.map(() => NO_MARK),
    save: async ({ parked, unparked }) => real.save({ marks: [], parked, unparked }),
  }
  let sends = 0
  const { self, incoming, finished } = await serve(
    t,
    async ({ step }) => {
      await step.run('count', () => ++sends)
      return step.sendEvent('notify', [
        { name: 'test/notified', data: {} },
        { name: 'test/notified', data: { n: 2 } },
      ])
    },
    { state: forgetful },
  )
  const record = firstRecord(eventNamed(), 'app-f', Date.now())
  await self.publish([record])
  await finished(record.runId)
  await self.publish([{ ...record, seq: 1, steps: [{ id: 'count', output: 1, attempts: 1, endedAt: Date.now() }] }])
  await eventually(async () => (incoming.values.length === 4 ? true : undefined))
  const ids = incoming.values.map((e) => e.internalId)
  t.same(ids.slice(2), ids.slice(0, 2), 'the same internal IDs both times')
  t.same(
    incoming.values.map((e) => e.id),
    ids,
    'and so the same dedup keys',
  )
  t.same(incoming.values[0].source, { kind: 'function', functionId: 'app-f', runId: record.runId, stepId: 'notify' })
})

t.test('a retry waiting for its backoff does not hold up other runs on the same partition', async (t) => {
  const { self, runs, finished } = await serve(
    t,
    async ({ event, attempt }) => {
      if (event.data.flaky && attempt === 0) throw new Error('first attempt fails')
      return attempt
    },
    { backoffMs: 1_500 },
  )
  const flaky = firstRecord(eventNamed({ flaky: true }), 'app-f', Date.now())
  await self.publish([flaky])
  // Its retry record is on the partition now, ahead of the next run's record.
  const waiting = await eventually(async () =>
    runs.values.find((r) => r.runId === flaky.runId && r.nextAttemptAt !== undefined),
  )
  const steady = firstRecord(eventNamed(), 'app-f', Date.now())
  await self.publish([steady])
  const steadyDone = await finished(steady.runId)
  t.ok(steadyDone.endedAt! < waiting.nextAttemptAt!, 'the later run finished while the retry waited')
  const flakyDone = await finished(flaky.runId)
  t.ok(flakyDone.endedAt! >= waiting.nextAttemptAt!, 'the retry ran once due')
  t.match(flakyDone, { status: 'completed', output: 1, attempts: 2 })
})

t.test('a parked retry is durable: a new runner on the same store runs it when due', async (t) => {
  const topic = `fn-${++topics}`
  let calls = 0
  const handler: FunctionHandler = async ({ attempt }) => {
    calls++
    if (attempt === 0) throw new Error('fails once')
    return 'second attempt'
  }
  const first = await serve(t, handler, { topic })
  const record = firstRecord(eventNamed(), 'app-f', Date.now())
  await first.self.publish([record])
  await eventually(async () => first.runs.values.find((r) => r.runId === record.runId && r.nextAttemptAt !== undefined))
  await first.runner.stop()
  t.equal(calls, 1, 'stopped while the retry waited')
  const second = await serve(t, handler, { topic })
  const done = await second.finished(record.runId)
  t.match(done, { status: 'completed', output: 'second attempt', attempts: 2 })
  t.equal(calls, 2)
})

t.test('a run whose first execution takes a while shows as running before its first checkpoint', async (t) => {
  let release!: () => void
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  const { self, runs, finished } = await serve(t, async ({ step }) => step.run('slow', () => held.then(() => 'done')))
  const record = firstRecord(eventNamed(), 'app-f', Date.now())
  await self.publish([record])
  const running = await eventually(async () =>
    runs.values.find((r) => r.runId === record.runId && r.status === 'running'),
  )
  t.match(running, { version: 1, steps: [], startedAt: Number })
  release()
  t.match(await finished(record.runId), {
    status: 'completed',
    output: 'done',
    steps: [{ id: 'slow', output: 'done' }],
  })
})
