// The ControlStore on a compacted topic, over every Bus adapter: the shared real Kafka broker (on the
// test's client, SLUICE_KAFKA_CLIENT; both clients pass the Bus suite) and the local RocksDB log.
// `reopen()` is a second store on the same topic: another node.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import pino from 'pino'
import { createLocalBus } from '../../bus/local.ts'
import type { Bus } from '../../bus/types.ts'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createTopicControlStore } from '../../control/topic.ts'
import type { ControlStore } from '../../control/types.ts'
import { testServices } from '../infra/services.ts'
import { eventually, removeDir, tempDir } from '../helpers/server.ts'
import { createTestKafkaBus } from '../helpers/kafka-bus.ts'
import { controlStoreSuite } from './control-store-suite.ts'

const log = pino({ level: 'silent' })
const topicName = () => `control-${randomUUID().slice(0, 12)}`

interface BusFixture {
  bus: Bus
  close(): Promise<void>
}
const adapters: Array<[string, () => Promise<BusFixture>]> = [
  [
    'Kafka',
    async () => {
      const bus = await createTestKafkaBus(
        { brokers: testServices().kafkaBrokers, clientId: 'sluice-control-test' },
        log,
      )
      return { bus, close: () => bus.close() }
    },
  ],
  [
    'local bus',
    async () => {
      const dir = await tempDir()
      const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
      const bus = createLocalBus(rocks, log, { maxBatchRecords: 100, retentionCheckMs: 60_000 })
      return {
        bus,
        close: async () => {
          await bus.close()
          await rocks.close()
          await removeDir(dir)
        },
      }
    },
  ],
]

for (const [name, openBus] of adapters) {
  controlStoreSuite(t, `topic ControlStore on ${name}`, async () => {
    const f = await openBus()
    const topic = topicName()
    const stores: ControlStore[] = [await createTopicControlStore(f.bus, topic, log)]
    const reopen = async () => {
      stores.push(await createTopicControlStore(f.bus, topic, log))
      return stores[stores.length - 1]
    }
    return {
      store: stores[0],
      reopen,
      peer: reopen,
      async close() {
        for (const store of stores) await store.close()
        await f.close()
      },
    }
  })

  t.test(
    `topic ControlStore on ${name}: a write on one node reaches every other node's view, deletes too`,
    async (t) => {
      const f = await openBus()
      const topic = topicName()
      const a = await createTopicControlStore(f.bus, topic, log)
      const b = await createTopicControlStore(f.bus, topic, log)
      t.teardown(async () => {
        await a.close()
        await b.close()
        await f.close()
      })
      const key = { id: 'k1', hash: 'h1', env: 'production', prefix: 'sk_1', createdAt: 1 }
      await a.put('key', 'h1', key)
      t.same(a.get('key', 'h1'), key, 'the writer reads its own write as soon as put resolves')
      await eventually(async () => b.get('key', 'h1'), 30_000)
      t.same(b.get('key', 'h1'), key, 'another node sees it without a round trip per read')
      await b.put('key', 'h1', { ...key, revokedAt: 2 })
      t.equal(b.get('key', 'h1')?.revokedAt, 2)
      await eventually(async () => (a.get('key', 'h1')?.revokedAt === 2 ? true : undefined), 30_000)
      await a.delete('key', 'h1')
      t.equal(a.get('key', 'h1'), undefined, 'the deleting node no longer sees it when delete resolves')
      await eventually(async () => (b.get('key', 'h1') === undefined ? true : undefined), 30_000)
      const late = await createTopicControlStore(f.bus, topic, log)
      t.teardown(() => late.close())
      t.equal(late.get('key', 'h1'), undefined, 'a node started after the delete (tombstone) does not see it either')
    },
  )

  t.test(
    `topic ControlStore on ${name}: many concurrent writes each resolve visible, in the final state everywhere`,
    async (t) => {
      const f = await openBus()
      const topic = topicName()
      const a = await createTopicControlStore(f.bus, topic, log)
      t.teardown(async () => {
        await a.close()
        await f.close()
      })
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          await a.put('env', `env-${i}`, { name: `env-${i}`, kind: 'standard', createdAt: i })
          if (a.get('env', `env-${i}`)?.createdAt !== i) throw new Error(`env-${i} not visible after put`)
        }),
      )
      const b = await createTopicControlStore(f.bus, topic, log)
      t.teardown(() => b.close())
      t.equal(b.list('env').length, 50, 'a node opened afterwards has every document at once')
    },
  )
}
