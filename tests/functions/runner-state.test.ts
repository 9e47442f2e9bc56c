// The embedded runner state's parked records (runner/rocksdb.ts) on a real RocksDB: the timer loop
// asks every function every second what is due, and a function with nothing due must cost no read;
// what is parked or unparked is still due at its time, and a new state on the same store finds it.
import t from 'tap'
import { join } from 'node:path'
import { openRocks, type Rocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { newUlid } from '../../core/ids.ts'
import { keyRange } from '../../core/keyspaces.ts'
import { firstRecord } from '../../core/run-record.ts'
import { createRocksRunnerState } from '../../runner/rocksdb.ts'
import { removeDir, tempDir } from '../helpers/server.ts'

const dir = await tempDir()
const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
t.teardown(async () => {
  await rocks.close()
  await removeDir(dir)
})
let parkedScans = 0
const parkedSpace = keyRange('runnerParked').gte
const counted: Rocks = {
  ...rocks,
  scan: (range) => {
    if (range.gte?.startsWith(parkedSpace)) parkedScans++
    return rocks.scan(range)
  },
}

const recordDueAt = (dueAt: number) => {
  const id = newUlid()
  const event = { internalId: id, id, name: 'test/x', data: {}, ts: dueAt, env: 'production', receivedAt: dueAt }
  return { ...firstRecord({ ...event, source: { kind: 'api' } }, 'app-f', dueAt), dueAt }
}

t.test('a function with nothing parked is read once, however often it is asked', async (t) => {
  const state = createRocksRunnerState(counted, 'idle')
  const before = parkedScans
  for (let i = 0; i < 10; i++) {
    t.same(await state.due(Date.now(), 500), [])
    t.equal(await state.nextDueAt(), null)
  }
  t.equal(parkedScans - before, 1, 'one read for twenty questions')
})

t.test('parked and unparked records are due at their time without a read per question', async (t) => {
  const state = createRocksRunnerState(counted, 'busy')
  t.equal(await state.nextDueAt(), null)
  const now = Date.now()
  const later = recordDueAt(now + 60_000)
  const sooner = recordDueAt(now + 1_000)
  await state.save({ marks: [], parked: [later], unparked: [] })
  await state.save({ marks: [], parked: [sooner], unparked: [] })
  const before = parkedScans
  t.equal(await state.nextDueAt(), now + 1_000, 'the earliest of what was parked since')
  t.same(await state.due(now, 500), [], 'nothing due yet')
  t.equal(parkedScans, before, 'known without a read')
  t.same(
    (await state.due(now + 1_000, 500)).map((r) => r.runId),
    [sooner.runId],
    'due at its time',
  )
  await state.unpark([sooner])
  t.equal(await state.nextDueAt(), now + 60_000, 'after an unpark, the next one, read again')
  const restarted = createRocksRunnerState(counted, 'busy')
  t.equal(await restarted.nextDueAt(), now + 60_000, 'a new state on the same store finds it')
  await restarted.save({ marks: [], parked: [], unparked: [later] })
  t.equal(await restarted.nextDueAt(), null, 'unparked by a save')
})

t.test('a read that a write overtook is not kept', async (t) => {
  // The first scan reads at once and answers only once released: it read before the park was written.
  let release: (() => void) | undefined
  let first = true
  const slow: Rocks = {
    ...rocks,
    scan: (range) => {
      if (!first) return rocks.scan(range)
      first = false
      return (async function* () {
        const read = []
        for await (const entry of rocks.scan(range)) read.push(entry)
        await new Promise<void>((resolve) => {
          release = resolve
        })
        yield* read
      })()
    },
  }
  const state = createRocksRunnerState(slow, 'raced')
  const reading = state.nextDueAt()
  while (!release) await new Promise((r) => setImmediate(r))
  const record = recordDueAt(Date.now() + 5_000)
  await state.save({ marks: [], parked: [record], unparked: [] })
  release()
  t.equal(await reading, null, 'the read from before the park')
  t.equal(await state.nextDueAt(), record.dueAt, 'read again, and the park is there')
})
