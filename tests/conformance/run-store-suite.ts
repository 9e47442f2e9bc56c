// The RunStore contract, to run against every adapter (RocksDB here; ClickHouse next).
import type { Test } from 'tap'
import { newUlid } from '../../core/ids.ts'
import type { RunDoc, RunStore } from '../../store/runs-types.ts'

export interface RunStoreFixture {
  store: RunStore
  close(): Promise<void>
}

function run(overrides: Partial<RunDoc> = {}): RunDoc {
  return {
    runId: newUlid(),
    functionId: 'app-fn',
    env: 'production',
    eventId: newUlid(),
    eventName: 'app/thing.happened',
    status: 'queued',
    attempts: 1,
    steps: [],
    queuedAt: 1_700_000_000_000,
    version: 0,
    ...overrides,
  }
}

export function runStoreSuite(t: Test, name: string, open: () => Promise<RunStoreFixture>): void {
  t.test(`${name}: a batch run (batchEvents) reads back with its events, and each of them finds it`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const [first, second, third] = [newUlid(), newUlid(), newUlid()]
    const batch = run({ eventId: first, eventIds: [first, second, third], status: 'completed', version: 2 })
    const alone = run({ eventId: second })
    await f.store.upsertRuns([batch, alone])
    t.same((await f.store.getRun(batch.runId))?.eventIds, [first, second, third])
    for (const eventId of [first, third])
      t.same(
        (await f.store.queryRuns({ eventId, limit: 10 })).runs.map((r) => r.runId),
        [batch.runId],
        'found by each of its events',
      )
    t.same(
      (await f.store.queryRuns({ eventId: second, limit: 10 })).runs.map((r) => r.runId).sort(),
      [batch.runId, alone.runId].sort(),
      'beside the runs the event started alone',
    )
  })

  t.test(`${name}: an upserted run reads back equal, by run ID`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const r = run({
      status: 'completed',
      version: 4,
      startedAt: 1_700_000_000_100,
      endedAt: 1_700_000_000_200,
      output: { ok: [1, 'two', null] },
      steps: [{ id: 'a', status: 'completed', output: { n: 1 }, attempts: 2, endedAt: 1_700_000_000_150 }],
    })
    await f.store.upsertRuns([r])
    t.same(await f.store.getRun(r.runId), r)
    t.equal(await f.store.getRun(newUlid()), null, 'unknown run → null')
  })

  t.test(`${name}: the highest version of a run wins, whatever the order it arrives in`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const queued = run()
    const running = { ...queued, status: 'running' as const, version: 2 }
    const completed = { ...queued, status: 'completed' as const, version: 4, output: 'done' }
    await f.store.upsertRuns([queued, completed, running])
    t.same(await f.store.getRun(queued.runId), completed, 'within one batch')
    await f.store.upsertRuns([running])
    await f.store.upsertRuns([queued])
    t.same(await f.store.getRun(queued.runId), completed, 'across batches')
    t.same((await f.store.queryRuns({ eventId: queued.eventId, limit: 10 })).runs, [completed], 'stored once')
  })

  t.test(`${name}: queries filter by function, status, event and env, newest first, with a cursor`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const fn = `fn-${newUlid()}`
    const eventId = newUlid()
    const runs = Array.from({ length: 5 }, (_, i) =>
      run({
        functionId: fn,
        eventId,
        env: i % 2 ? 'staging' : 'production',
        status: i < 3 ? 'completed' : 'failed',
        version: 2,
      }),
    )
    await f.store.upsertRuns(runs)
    const newestFirst = [...runs].reverse()
    t.same(
      (await f.store.queryRuns({ functionId: fn, limit: 10 })).runs.map((r) => r.runId),
      newestFirst.map((r) => r.runId),
    )
    t.same(
      (await f.store.queryRuns({ functionId: fn, status: 'failed', limit: 10 })).runs.map((r) => r.runId),
      [runs[4].runId, runs[3].runId],
    )
    t.same(
      (await f.store.queryRuns({ eventId, env: 'staging', limit: 10 })).runs.map((r) => r.runId),
      [runs[3].runId, runs[1].runId],
    )
    const first = await f.store.queryRuns({ functionId: fn, limit: 2 })
    t.same(
      first.runs.map((r) => r.runId),
      [runs[4].runId, runs[3].runId],
    )
    t.equal(first.nextCursor, runs[3].runId)
    const rest = await f.store.queryRuns({ functionId: fn, limit: 10, cursor: first.nextCursor! })
    t.same(
      rest.runs.map((r) => r.runId),
      [runs[2].runId, runs[1].runId, runs[0].runId],
    )
    t.equal(rest.nextCursor, null)
  })

  t.test(`${name}: a run is found under its current status only`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const fn = `fn-${newUlid()}`
    const r = run({ functionId: fn })
    await f.store.upsertRuns([r])
    t.equal((await f.store.queryRuns({ status: 'queued', functionId: fn, limit: 10 })).runs.length, 1)
    await f.store.upsertRuns([{ ...r, status: 'failed', version: 2 }])
    t.same((await f.store.queryRuns({ status: 'queued', functionId: fn, limit: 10 })).runs, [])
    t.same(
      (await f.store.queryRuns({ status: 'failed', limit: 1000 })).runs
        .filter((x) => x.runId === r.runId)
        .map((x) => x.status),
      ['failed'],
    )
  })
}
