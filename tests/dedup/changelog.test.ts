// The dedup changelog store, over both Bus adapters (the shared real Kafka broker and the local log):
// each partition's store writes its entries to the same partition number of the changelog, and a
// fresh RocksDB restores a partition from it, as when the partition moves to another instance.
// On the default Kafka client (@platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import pino from 'pino'
import { createTestKafkaBus } from '../helpers/kafka-bus.ts'
import { createLocalBus } from '../../bus/local.ts'
import type { Bus } from '../../bus/types.ts'
import { openRocks, type Rocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { openChangelogDedupStore } from '../../dedup/changelog.ts'
import { createRocksDedupStore } from '../../dedup/rocksdb.ts'
import type { DedupStore, SeenEntry } from '../../dedup/types.ts'
import { testServices } from '../infra/services.ts'
import { eventually, removeDir, tempDir } from '../helpers/server.ts'

const log = pino({ level: 'silent' })
const WINDOW = 60_000
const PARTITIONS = 3
const NOW = Date.now()

async function rocksIn(dir: string, name: string): Promise<Rocks> {
  return openRocks(join(dir, name), rocksOptionsOf(DEFAULTS))
}

const adapters: Array<[string, (dir: string) => Promise<{ bus: Bus; close(): Promise<void> }>]> = [
  [
    'Kafka',
    async () => {
      const bus = await createTestKafkaBus({ brokers: testServices().kafkaBrokers, clientId: 'sluice-dedup-test' }, log)
      return { bus, close: () => bus.close() }
    },
  ],
  [
    'local bus',
    async (dir) => {
      const rocks = await rocksIn(dir, 'log')
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

for (const [name, openBus] of adapters) {
  t.test(
    `${name}: entries marked on partition N are restored on partition N of a fresh RocksDB, without expired ones`,
    async (t) => {
      const dir = await tempDir()
      const f = await openBus(dir)
      t.teardown(async () => {
        await f.close()
        await removeDir(dir)
      })
      const incoming = `incoming-${randomUUID().slice(0, 8)}`
      const changelog = `changelog-${randomUUID().slice(0, 8)}`
      await f.bus.ensureTopics({
        [incoming]: { partitions: PARTITIONS },
        [changelog]: { partitions: PARTITIONS, compacted: true, retentionMs: 2 * WINDOW },
      })

      // As the dedup stage does: events keyed env\0id on `incoming`; the owner of each partition marks them.
      const events: SeenEntry[] = Array.from({ length: 30 }, (_, i) => ({
        env: i % 2 ? 'production' : 'staging',
        id: `evt-${i}`,
        internalId: `INT-${i}`,
        receivedAt: NOW - i,
      }))
      const expired: SeenEntry = {
        env: 'production',
        id: 'ancient',
        internalId: 'INT-OLD',
        receivedAt: NOW - 3 * WINDOW,
      }
      const all = [...events, expired]
      await f.bus.publish(
        incoming,
        all.map((e) => ({ key: `${e.env}\0${e.id}`, value: Buffer.from(JSON.stringify(e)) })),
      )
      const first = await rocksIn(dir, 'first')
      const stores = new Map<number, DedupStore>()
      const partitionOf = new Map<string, number>()
      const sub = await f.bus.subscribe({
        group: `dedup-${randomUUID().slice(0, 8)}`,
        topics: [incoming],
        onAssign: async (tps) => {
          for (const p of tps.flatMap((tp) => tp.partitions))
            stores.set(
              p,
              await openChangelogDedupStore({
                rocks: first,
                bus: f.bus,
                topic: changelog,
                partition: p,
                windowMs: WINDOW,
                log,
              }),
            )
        },
        handler: async (batch) => {
          const entries = batch.records.map((r) => JSON.parse(r.value.toString()) as SeenEntry)
          for (const e of entries) partitionOf.set(e.id, batch.partition)
          await stores.get(batch.partition)!.markSeen(entries)
        },
      })
      await eventually(async () => (partitionOf.size === all.length ? true : undefined), 30_000)
      await sub.stop()
      await first.close()
      t.ok(new Set(partitionOf.values()).size > 1, 'the events spread over several partitions')

      const fresh = await rocksIn(dir, 'fresh')
      t.teardown(() => fresh.close())
      for (let p = 0; p < PARTITIONS; p++) {
        const store = await openChangelogDedupStore({
          rocks: fresh,
          bus: f.bus,
          topic: changelog,
          partition: p,
          windowMs: WINDOW,
          log,
        })
        const found = await store.lookup(events.map((e) => ({ env: e.env, id: e.id, receivedAt: NOW })))
        const expected = events.map((e) => (partitionOf.get(e.id) === p ? e.internalId : null))
        t.same(found, expected, `partition ${p} restored exactly its own entries`)
        if (partitionOf.get('ancient') === p)
          t.same(await store.lookup([expired]), [null], 'an entry older than the window was not restored')
      }
    },
  )

  t.test(`${name}: opening a partition clears what the local RocksDB held for it before`, async (t) => {
    const dir = await tempDir()
    const f = await openBus(dir)
    const rocks = await rocksIn(dir, 'db')
    t.teardown(async () => {
      await rocks.close()
      await f.close()
      await removeDir(dir)
    })
    const changelog = `changelog-${randomUUID().slice(0, 8)}`
    await f.bus.ensureTopics({ [changelog]: { partitions: 1, compacted: true } })
    // A stale local entry, as left by an earlier assignment of partition 0 (and one of partition 10, untouched).
    const stale = { env: 'production', id: 'stale', internalId: 'STALE', receivedAt: NOW }
    await createRocksDedupStore(rocks, { windowMs: WINDOW, prefix: 'p0/' }).markSeen([stale])
    await createRocksDedupStore(rocks, { windowMs: WINDOW, prefix: 'p10/' }).markSeen([stale])
    const store = await openChangelogDedupStore({
      rocks,
      bus: f.bus,
      topic: changelog,
      partition: 0,
      windowMs: WINDOW,
      log,
    })
    t.same(await store.lookup([stale]), [null], 'the stale local entry is gone')
    t.same(
      await createRocksDedupStore(rocks, { windowMs: WINDOW, prefix: 'p10/' }).lookup([stale]),
      ['STALE'],
      'partition 10 is untouched',
    )
    await store.markSeen([{ ...stale, id: 'new', internalId: 'NEW' }])
    const reopened = await openChangelogDedupStore({
      rocks,
      bus: f.bus,
      topic: changelog,
      partition: 0,
      windowMs: WINDOW,
      log,
    })
    t.same(
      await reopened.lookup([{ ...stale, id: 'new' }]),
      ['NEW'],
      'what was marked through the changelog survives a reopen',
    )
  })
}
