// The distributed RunnerState (runner/changelog.ts), over both Bus adapters (the shared real Kafka
// broker and the local log): marks and parked retries written on partition N are restored by a
// fresh RocksDB that opens partition N, as when a runner pod is replaced; unparked ones are not.
// On the default Kafka client (@platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import pino from 'pino'
import { createTestKafkaBus } from '../helpers/kafka-bus.ts'
import { createLocalBus } from '../../bus/local.ts'
import type { Bus } from '../../bus/types.ts'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { newUlids } from '../../core/ids.ts'
import { openChangelogRunnerState } from '../../runner/changelog.ts'
import { NO_MARK } from '../../runner/state.ts'
import type { RunRecord } from '../../core/run-record.ts'
import { testServices } from '../infra/services.ts'
import { removeDir, tempDir } from '../helpers/server.ts'

const log = pino({ level: 'silent' })

const adapters: Array<[string, (dir: string) => Promise<{ bus: Bus; close(): Promise<void> }>]> = [
  [
    'Kafka',
    async () => {
      const bus = await createTestKafkaBus(
        { brokers: testServices().kafkaBrokers, clientId: 'sluice-runner-state-test' },
        log,
      )
      return { bus, close: () => bus.close() }
    },
  ],
  [
    'local bus',
    async (dir) => {
      const rocks = await openRocks(join(dir, 'log'), rocksOptionsOf(DEFAULTS))
      const bus = createLocalBus(rocks, log, { maxBatchRecords: 100, retentionCheckMs: 60_000 })
      return {
        bus,
        close: async () => {
          await bus.close()
          await rocks.close()
        },
      }
    },
  ],
]

const retry = (runId: string, seq: number, dueAt: number): RunRecord => ({
  runId,
  functionId: 'app-fn',
  env: 'production',
  seq,
  attempt: 1,
  attempts: 2,
  steps: [],
  dueAt,
  queuedAt: 1,
  event: {
    internalId: runId,
    id: runId,
    name: 'x/y',
    data: {},
    ts: 1,
    env: 'production',
    receivedAt: 1,
    source: { kind: 'api' },
  },
})

for (const [name, openBus] of adapters) {
  t.test(
    `${name}: a replacement restores the partition's marks and parked retries, and nothing of other partitions`,
    async (t) => {
      const dir = await tempDir()
      const f = await openBus(dir)
      t.teardown(async () => {
        await f.close()
        await removeDir(dir)
      })
      const topic = `fn-state-${randomUUID().slice(0, 8)}`
      await f.bus.ensureTopics({ [topic]: { partitions: 3, compacted: true } })
      const [runA, runB, runC, runD] = newUlids(4)
      const now = Date.now()

      const first = await openRocks(join(dir, 'first'), rocksOptionsOf(DEFAULTS))
      t.teardown(() => first.close())
      const p1 = await openChangelogRunnerState({
        rocks: first,
        bus: f.bus,
        topic,
        scope: 'production~app-fn',
        partition: 1,
        retentionMs: 60_000,
        log,
      })
      const p2 = await openChangelogRunnerState({
        rocks: first,
        bus: f.bus,
        topic,
        scope: 'production~app-fn',
        partition: 2,
        retentionMs: 60_000,
        log,
      })
      const open = (seq: number) => ({ seq, state: 'open' as const })
      await p1.save({
        marks: [
          { runId: runA, mark: open(3) },
          { runId: runB, mark: open(0) },
        ],
        parked: [retry(runB, 1, now + 60_000), retry(runC, 2, now - 1)],
        unparked: [],
        cronTicks: [{ cron: '0 9 * * *', atMs: now - 1000 }],
      })
      await p1.save({
        marks: [{ runId: runA, mark: { seq: 4, state: 'cancelling', cause: { kind: 'api' } } }],
        parked: [],
        unparked: [],
      })
      await p1.unpark([retry(runC, 2, now - 1)]) // re-published: must not come back
      await p2.save({ marks: [{ runId: runD, mark: open(9) }], parked: [retry(runD, 10, now + 5_000)], unparked: [] })

      const second = await openRocks(join(dir, 'second'), rocksOptionsOf(DEFAULTS))
      t.teardown(() => second.close())
      const restored = await openChangelogRunnerState({
        rocks: second,
        bus: f.bus,
        topic,
        scope: 'production~app-fn',
        partition: 1,
        retentionMs: 60_000,
        log,
      })
      t.same(
        await restored.processed([runA, runB, runC, runD]),
        [{ seq: 4, state: 'cancelling', cause: { kind: 'api' } }, open(0), NO_MARK, NO_MARK],
        'the newest mark per run of partition 1 only, with its state',
      )
      t.same((await restored.parkedOf(runB))?.seq, 1, "a run's parked record is found by its run")
      t.equal(await restored.parkedOf(runC), null, 'not once unparked')
      t.equal(await restored.lastCronTick('0 9 * * *'), now - 1000, 'the last cron tick')
      t.equal(await restored.nextDueAt(), now + 60_000, "the parked retry, not the unparked one nor partition 2's")
      t.same(
        (await restored.due(now + 60_000, 10)).map((r) => [r.runId, r.seq]),
        [[runB, 1]],
      )
    },
  )
}
