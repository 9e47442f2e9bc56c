// The dedup stage in distributed mode on the real Kafka broker: two instances in one group, each
// with its own RocksDB; when one stops, the other restores that one's partitions from the
// changelog and drops the duplicates of events the stopped instance accepted.
// On the default Kafka client (@platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import pino from 'pino'
import { createTestKafkaBus } from '../helpers/kafka-bus.ts'
import { createOutput } from '../../bus/output.ts'
import { asRead, createSource, type Consumed } from '../../bus/source.ts'
import { jsonCodec } from '../../bus/codec.ts'
import type { Bus } from '../../bus/types.ts'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import type { EventRecord, StoredEvent } from '../../core/event.ts'
import { createDedup } from '../../dedup/index.ts'
import { openChangelogDedupStore } from '../../dedup/changelog.ts'
import { testServices } from '../infra/services.ts'
import { eventually, removeDir, tempDir } from '../helpers/server.ts'

const log = pino({ level: 'silent' })
const WINDOW = 60_000
const id = () => randomUUID().slice(0, 8)
const topics = {
  incoming: `incoming-${id()}`,
  changelog: `changelog-${id()}`,
  events: `events-${id()}`,
  duplicates: `duplicates-${id()}`,
}
const group = `dedup-${id()}`
const codec = jsonCodec<StoredEvent>()

async function dedupInstance(t: Test, name: string) {
  const dir = await tempDir()
  const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  const bus = await createTestKafkaBus(
    { brokers: testServices().kafkaBrokers, clientId: `sluice-dedup-${name}`, sessionTimeoutMs: 6000 },
    log,
  )
  await bus.ensureTopics({
    [topics.incoming]: { partitions: 3 },
    [topics.events]: { partitions: 3 },
    [topics.duplicates]: { partitions: 3 },
    [topics.changelog]: { partitions: 3, compacted: true, retentionMs: 2 * WINDOW },
  })
  const opened: number[] = [] // partitions, in the order their stores were opened (restored)
  const stage = createDedup(
    {
      source: createSource(bus, codec),
      outputs: {
        events: createOutput<Consumed<EventRecord>>(bus, topics.events, asRead, (e) => e.value.internalId),
        duplicates: createOutput<StoredEvent>(bus, topics.duplicates, codec, (e) => e.internalId),
      },
      openStore: async (partition) => {
        opened.push(partition)
        return openChangelogDedupStore({ rocks, bus, topic: topics.changelog, partition, windowMs: WINDOW, log })
      },
      log,
    },
    { inputTopic: topics.incoming, group, expireIntervalMs: 60_000 },
  )
  await stage.start()
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await stage.stop()
    await bus.close()
    await rocks.close()
    await removeDir(dir)
  }
  t.teardown(stop)
  return { bus, opened, stop }
}

function collect(bus: Bus, topic: string) {
  const seen: StoredEvent[] = []
  const ready = bus.subscribe({
    group: `collect-${id()}`,
    topics: [topic],
    handler: async (b) => void seen.push(...b.records.map((r) => codec.decode(r.value))),
  })
  return { seen, ready }
}

t.test(
  'a partition that moves keeps its dedup state: duplicates of what the stopped instance accepted are dropped',
  async (t) => {
    const a = await dedupInstance(t, 'a')
    const b = await dedupInstance(t, 'b')
    // a alone opens every partition; once b joins, the group splits them and b opens its share.
    await eventually(async () => (b.opened.length > 0 ? true : undefined), 60_000, 50)
    const events = collect(a.bus, topics.events)
    const duplicates = collect(a.bus, topics.duplicates)
    const subs = await Promise.all([events.ready, duplicates.ready])
    t.teardown(() => Promise.all(subs.map((s) => s.stop())))

    const now = Date.now()
    const originals: EventRecord[] = Array.from({ length: 30 }, (_, i) => ({
      internalId: `ORIG-${i}`,
      id: `order-${i}`,
      name: 'shop/order',
      data: { i },
      ts: now,
      env: 'production',
      receivedAt: now,
      source: { kind: 'api' },
    }))
    const incoming = createOutput<EventRecord>(a.bus, topics.incoming, codec, (e) => `${e.env}\0${e.id}`)
    await incoming.publish(originals)
    await eventually(async () => (events.seen.length >= 30 ? true : undefined), 30_000)
    t.same(new Set(events.seen.map((e) => e.internalId)).size, 30, 'every original accepted once')

    const ownedByB = [...b.opened]
    const openedByABefore = a.opened.length
    await b.stop()
    await eventually(
      async () => (ownedByB.every((p) => a.opened.slice(openedByABefore).includes(p)) ? true : undefined),
      60_000,
      50,
    )
    t.pass(`instance a took over partitions ${ownedByB} and restored them from the changelog`)

    await incoming.publish(originals.map((e, i) => ({ ...e, internalId: `DUP-${i}`, receivedAt: now + 1000 })))
    await eventually(async () => (duplicates.seen.length >= 30 ? true : undefined), 30_000)
    t.same(
      duplicates.seen.map((d) => d.duplicateOf).sort(),
      originals.map((e) => e.internalId).sort(),
      'each repeat names the original it duplicates',
    )
    await new Promise((r) => setTimeout(r, 500))
    t.notOk(
      events.seen.some((e) => e.internalId.startsWith('DUP-')),
      'no repeat reached events',
    )
  },
)
