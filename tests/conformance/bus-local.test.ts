import t from 'tap'
import type { ConsumedRecord } from '../../bus/types.ts'
import { jsonCodec } from '../../bus/codec.ts'
import { createSource, type Source } from '../../bus/source.ts'
import { eventually } from '../helpers/server.ts'
import { busSuite } from './bus-suite.ts'
import { consumeInto, countLogValues, openLocal } from './local-log-fixture.ts'
import { keyPrefix } from '../../core/keyspaces.ts'

let n = 0

busSuite(
  t,
  'local RocksDB bus',
  () => openLocal(),
  () => `t${process.pid}-${n++}`,
  { groupMembers: 'one' },
)

// What only the local log has: records stored as record batches (one RocksDB value per partition
// and flush), an in-memory tail of recent batches, offsets written lazily, and retention
// (bus-local-retention.test.ts).

t.test(
  'local bus: one publish is one stored record batch per partition, and a reader with a smaller maxBatchRecords still gets each record once, in order',
  async (t) => {
    const f = await openLocal()
    t.teardown(() => f.close())
    await f.bus.ensureTopics({ big: { partitions: 1 } })
    await f.bus.publish(
      'big',
      Array.from({ length: 250 }, (_, i) => ({ key: 'k', value: String(i) })),
    )
    await f.bus.publish(
      'big',
      Array.from({ length: 250 }, (_, i) => ({ key: 'k', value: Buffer.from(String(250 + i)) })),
    )
    t.equal(await countLogValues(f.rocks, 'big'), 2, 'two RocksDB values for 500 records')
    const seen: string[] = []
    const batchSizes: number[] = []
    const sub = await f.bus.subscribe({
      group: 'small',
      topics: ['big'],
      maxBatchRecords: 10,
      handler: async (b) => {
        batchSizes.push(b.records.length)
        seen.push(...b.records.map((r) => r.value.toString()))
      },
    })
    await eventually(async () => (seen.length === 500 ? true : undefined))
    await sub.stop()
    t.same(
      seen,
      Array.from({ length: 500 }, (_, i) => String(i)),
      'strings and Buffers alike, in order, once',
    )
    t.same(batchSizes, [250, 250], 'a record batch is never split (maxBatchRecords is a soft limit, as in Kafka)')
  },
)

t.test(
  'local bus: a consumer far behind reads from RocksDB, then from the in-memory tail, without a gap or a repeat',
  async (t) => {
    const f = await openLocal()
    t.teardown(() => f.close())
    await f.bus.ensureTopics({ long: { partitions: 1 } })
    const value = 'x'.repeat(50_000) // 200 publishes × 50 KB = 10 MB: more than the 4 MiB tail keeps
    for (let i = 0; i < 200; i++) await f.bus.publish('long', [{ key: 'k', value: `${i}:${value}` }])
    const seen: number[] = []
    const sub = await f.bus.subscribe({
      group: 'late',
      topics: ['long'],
      handler: async (b) => void seen.push(...b.records.map((r) => Number(r.value.toString().split(':')[0]))),
    })
    t.teardown(() => sub.stop())
    await eventually(async () => (seen.length === 200 ? true : undefined))
    await f.bus.publish('long', [{ key: 'k', value: '200:live' }])
    await eventually(async () => (seen.length === 201 ? true : undefined))
    t.same(
      seen,
      Array.from({ length: 201 }, (_, i) => i),
    )
  },
)

t.test('local bus: offsets are written lazily, yet a clean stop or close keeps them', async (t) => {
  const f = await openLocal({ commitIntervalMs: 60_000 })
  t.teardown(() => f.close())
  await f.bus.ensureTopics({ lazy: { partitions: 1 } })
  await f.bus.publish('lazy', [{ key: 'k', value: 'a' }])
  const first: string[] = []
  await consumeInto(f.bus, 'g', 'lazy', first)
  await eventually(async () => (first.length === 1 ? true : undefined))
  const bus = await f.reopen() // close() without stopping the subscription first
  await bus.ensureTopics({ lazy: { partitions: 1 } })
  await bus.publish('lazy', [{ key: 'k', value: 'b' }])
  const second: string[] = []
  const sub = await consumeInto(bus, 'g', 'lazy', second)
  t.teardown(() => sub.stop())
  await eventually(async () => (second.length === 1 ? true : undefined))
  await new Promise((r) => setTimeout(r, 100))
  t.same(second, ['b'], 'resumed after what was committed before the restart')
})

t.test(
  "local bus: a shared source takes the producer's own values from the tail; from RocksDB, or a plain source, decode",
  async (t) => {
    const f = await openLocal()
    t.teardown(() => f.close())
    await f.bus.ensureTopics({ handed: { partitions: 1 } })
    const codec = jsonCodec<{ n: number; nested: { s: string } }>()
    const values = [0, 1, 2].map((n) => ({ n, nested: { s: `v${n}` } }))
    type Got = Array<{ record: ConsumedRecord; value: (typeof values)[number] }>
    const consume = (source: Source<(typeof values)[number]>, group: string, got: Got) =>
      source.subscribe({
        group,
        topics: ['handed'],
        handler: async (b) => void got.push(...b.records.map((record) => ({ record, value: source.decode(record) }))),
      })
    // Both live while the values are published, so the tail holds them until both handled them.
    const [plain, fromTail]: Got[] = [[], []]
    const subs = [
      await consume(createSource(f.bus, codec), 'plain', plain),
      await consume(f.bus.sharedSource(codec), 'live', fromTail),
    ]
    const output = f.bus.sharedOutput(
      'handed',
      codec,
      () => 'k',
      (v) => v,
    )
    await output.publish(values)
    await eventually(async () => (plain.length === 3 && fromTail.length === 3 ? true : undefined))
    for (const sub of subs) await sub.stop()
    t.ok(
      fromTail.every(({ value }, i) => value === values[i]),
      'the very objects the producer published: nothing decoded',
    )
    t.same(
      fromTail.map(({ record }) => record.value.toString()),
      values.map((v) => JSON.stringify(v)),
      'with their JSON text, for a store that writes it as is',
    )
    t.ok(
      plain.every(({ value }, i) => value !== values[i]),
      'a plain source decodes: it never sees the shared values',
    )
    t.same(
      plain.map(({ value }) => value),
      values,
    )
    const bus = await f.reopen() // an empty tail: the records come from RocksDB
    await bus.ensureTopics({ handed: { partitions: 1 } })
    const fromDisk: Got = []
    const sub = await consume(bus.sharedSource(codec), 'after-restart', fromDisk)
    await eventually(async () => (fromDisk.length === 3 ? true : undefined))
    await sub.stop()
    t.ok(
      fromDisk.every(({ value }, i) => value !== values[i]),
      'no producer value after a restart',
    )
    t.same(
      fromDisk.map(({ value }) => value),
      values,
      'decoded from the bytes, equal',
    )
  },
)

t.test('local bus: shared values are let go once every live group has handled them', async (t) => {
  const f = await openLocal()
  t.teardown(() => f.close())
  await f.bus.ensureTopics({ released: { partitions: 1 } })
  const codec = jsonCodec<{ n: number }>()
  const values = [{ n: 0 }, { n: 1 }]
  const source = f.bus.sharedSource(codec)
  const read = (group: string, into: Array<{ n: number }>) =>
    source.subscribe({
      group,
      topics: ['released'],
      handler: async (b) => void into.push(...b.records.map((r) => source.decode(r))),
    })
  const first: Array<{ n: number }> = []
  const sub = await read('first', first)
  t.teardown(() => sub.stop())
  await f.bus
    .sharedOutput(
      'released',
      codec,
      () => 'k',
      (v) => v,
    )
    .publish(values)
  await eventually(async () => (first.length === 2 ? true : undefined))
  t.ok(
    first.every((v, i) => v === values[i]),
    'the live group took them as published',
  )
  const later: Array<{ n: number }> = []
  const laterSub = await read('later', later) // a group that starts after every live one handled them
  t.teardown(() => laterSub.stop())
  await eventually(async () => (later.length === 2 ? true : undefined))
  t.same(later, values, 'still in the tail, as bytes')
  t.ok(
    later.every((v, i) => v !== values[i]),
    'decoded: the tail held the values no longer',
  )
})

t.test(
  'local bus: settle waits while a group is further behind than the limit, and says so when it stays behind',
  async (t) => {
    const f = await openLocal({ maxBatchRecords: 5 })
    t.teardown(() => f.close())
    await f.bus.ensureTopics({ slow: { partitions: 1 }, other: { partitions: 1 } })
    t.equal(await f.bus.settle(['slow'], 0, 10), true, 'nothing behind: at once')
    let release!: () => void
    let gate = new Promise<void>((r) => (release = r))
    const handled: string[] = []
    const sub = await f.bus.subscribe({
      group: 'slow-stage',
      topics: ['slow'],
      handler: async (b) => {
        await gate
        handled.push(...b.records.map((r) => r.value.toString()))
      },
    })
    t.teardown(() => sub.stop())
    await f.bus.publish(
      'slow',
      Array.from({ length: 30 }, (_, i) => ({ key: 'k', value: String(i) })),
    )
    t.equal(await f.bus.settle(['slow'], 10, 100), false, '30 records behind, limit 10: still behind after 100 ms')
    t.equal(await f.bus.settle(['slow'], 30, 10), true, 'within a limit of 30')
    t.equal(await f.bus.settle(['other'], 0, 10), true, 'another topic is not held back by it')
    const waiting = f.bus.settle(['slow'], 10, 30_000)
    release()
    gate = Promise.resolve()
    t.equal(await waiting, true, 'released once the group caught up to within the limit')
    await eventually(async () => (handled.length === 30 ? true : undefined))

    // A second group on the topic, held at its first batch: it holds publishers back until it stops.
    let open!: () => void
    const held = new Promise<void>((r) => (open = r))
    const late = await f.bus.subscribe({ group: 'late-stage', topics: ['slow'], handler: () => held })
    await eventually(async () => ((await f.bus.settle(['slow'], 10, 10)) ? undefined : true))
    const stopping = late.stop()
    open()
    await stopping
    t.equal(await f.bus.settle(['slow'], 0, 10), true, 'a group that stopped holds nothing back')
  },
)

t.test(
  'local bus: writeNow starts the write of what the tick published and committed at once; what comes after goes in the next, once it is done',
  async (t) => {
    const started: string[][] = []
    const f = await openLocal({}, (rocks) => ({
      ...rocks,
      write: (ops) => {
        started.push(ops.flatMap((op) => (op.type === 'put' ? [String(op.value)] : [])))
        return rocks.write(ops)
      },
    }))
    t.teardown(() => f.close())
    const { bus } = f
    await bus.ensureTopics({ now: { partitions: 1 } })
    started.length = 0
    const published = bus.publish('now', [{ key: 'k', value: 'a' }])
    const committed = bus.commit([{ type: 'put', key: keyPrefix('control', 'write-now'), value: 'op' }])
    t.same(started, [], 'a publish and a commit wait for the end of the tick')
    bus.writeNow()
    t.equal(started.length, 1, 'writeNow starts their write')
    t.ok(started[0].includes('op'), 'the committed op is in it')
    t.equal(started[0].filter((v) => v.includes('a')).length, 1, 'and the record batch published before it')
    const after = bus.publish('now', [{ key: 'k', value: 'b' }])
    bus.writeNow()
    t.equal(started.length, 1, 'a publish after it waits while that write is under way (one at a time)')
    await Promise.all([published, committed, after])
    t.equal(started.length, 2, 'then goes in the next write, once the first is done')
    t.equal(started[1].filter((v) => v.includes('b')).length, 1, 'its record batch alone')
    bus.writeNow()
    t.equal(started.length, 2, 'nothing pending: no write')
    const read: string[] = []
    await bus.readPartition('now', 0, async (records) => void read.push(...records.map((r) => r.value.toString())))
    t.same(read, ['a', 'b'], 'both readable, in order')
  },
)
