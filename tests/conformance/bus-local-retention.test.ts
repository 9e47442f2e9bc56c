// The local log's retention: what it deletes, when, and what a restart finds after it.
import t from 'tap'
import { keyRange } from '../../core/keyspaces.ts'
import { eventually } from '../helpers/server.ts'
import { consumeInto, countLogValues, openLocal } from './local-log-fixture.ts'

t.test('local bus: retention deletes only record batches every group has consumed', async (t) => {
  const f = await openLocal({ retentionCheckMs: 50, commitIntervalMs: 10 })
  t.teardown(() => f.close())
  await f.bus.ensureTopics({ kept: { partitions: 1 } })
  for (let i = 0; i < 5; i++) await f.bus.publish('kept', [{ key: 'k', value: String(i) }])
  const fast: string[] = []
  const sub = await consumeInto(f.bus, 'fast', 'kept', fast)
  t.teardown(() => sub.stop())
  let slowCalls = 0
  const slow = await f.bus.subscribe({
    group: 'slow',
    topics: ['kept'],
    handler: async () => {
      slowCalls++
      throw new Error('not yet')
    },
  })
  await eventually(async () => (fast.length === 5 && slowCalls > 0 ? true : undefined))
  await new Promise((r) => setTimeout(r, 300))
  t.equal(await countLogValues(f.rocks, 'kept'), 5, 'kept while the slow group has not consumed them')
  await slow.stop()
  const caughtUp: string[] = []
  const again = await consumeInto(f.bus, 'slow', 'kept', caughtUp)
  t.teardown(() => again.stop())
  await eventually(async () => (caughtUp.length === 5 ? true : undefined))
  t.same(caughtUp, ['0', '1', '2', '3', '4'])
  await eventually(async () => ((await countLogValues(f.rocks, 'kept')) === 0 ? true : undefined), 5_000)
  t.pass('deleted once both groups consumed them')
})

t.test(
  'local bus: each retention check deletes only what was consumed since the last one, and an idle log writes and reads nothing',
  async (t) => {
    const ranges: string[] = []
    const offset = (key: string) => parseInt(key.slice(key.lastIndexOf('\0') + 1), 16)
    let offsetScans = 0
    const offsets = keyRange('logOffsets')
    const f = await openLocal({ retentionCheckMs: 20, commitIntervalMs: 5 }, (rocks) => ({
      ...rocks,
      write: (ops) => {
        for (const op of ops) if (op.type === 'delRange') ranges.push(`${offset(op.start)}-${offset(op.end)}`)
        return rocks.write(ops)
      },
      scan: (range) => {
        if (range.gte === offsets.gte) offsetScans++
        return rocks.scan(range)
      },
    }))
    t.teardown(() => f.close())
    const { bus, rocks } = f
    await bus.ensureTopics({ tidy: { partitions: 1 } })
    const seen: string[] = []
    const sub = await consumeInto(bus, 'g', 'tidy', seen)
    t.teardown(() => sub.stop())
    await bus.publish(
      'tidy',
      ['a', 'b', 'c'].map((value) => ({ key: 'k', value })),
    )
    await eventually(async () => ((await countLogValues(rocks, 'tidy')) === 0 ? true : undefined), 5_000)
    const scansBefore = offsetScans
    await new Promise((r) => setTimeout(r, 300)) // 15 checks with nothing new
    t.same(ranges, ['0-3'], 'one range delete for the three consumed records, none while idle')
    t.equal(offsetScans, scansBefore, 'no check read the stored offsets while no group committed')
    await bus.publish(
      'tidy',
      ['d', 'e'].map((value) => ({ key: 'k', value })),
    )
    await eventually(async () => (ranges.length === 2 ? true : undefined), 5_000)
    t.same(ranges, ['0-3', '3-5'], 'the next one starts where the last ended')
    t.same(seen, ['a', 'b', 'c', 'd', 'e'])
  },
)

t.test(
  'local bus: retention holds what a group that committed before a restart, and consumes nothing since, has not read',
  async (t) => {
    const f = await openLocal({ retentionCheckMs: 20, commitIntervalMs: 5 })
    t.teardown(() => f.close())
    await f.bus.ensureTopics({ held: { partitions: 1 } })
    const consume = (group: string, seen: string[]) => consumeInto(f.bus, group, 'held', seen)
    const early: string[] = []
    const before = await consume('early', early)
    await f.bus.publish('held', [{ key: 'k', value: 'a' }])
    await eventually(async () => (early.length === 1 ? true : undefined))
    await before.stop()
    await f.bus.publish('held', [{ key: 'k', value: 'b' }])
    await eventually(async () => ((await countLogValues(f.rocks, 'held')) === 1 ? true : undefined), 5_000) // 'a' consumed
    await f.reopen()
    await f.bus.ensureTopics({ held: { partitions: 1 } })
    const late: string[] = []
    const sub = await consume('late', late)
    t.teardown(() => sub.stop())
    await eventually(async () => (late.length === 1 ? true : undefined))
    await new Promise((r) => setTimeout(r, 200)) // 10 checks after "late" committed
    t.equal(await countLogValues(f.rocks, 'held'), 1, 'what "early" has not read is kept, though only RocksDB knows it')
    const after = await consume('early', early)
    t.teardown(() => after.stop())
    await eventually(async () => (early.length === 2 ? true : undefined))
    await eventually(async () => ((await countLogValues(f.rocks, 'held')) === 0 ? true : undefined), 5_000)
    t.same(early, ['a', 'b'])
  },
)

t.test(
  'local bus: after retention deleted every record of a partition, a restart goes on from its offsets, and a group gets the new records',
  async (t) => {
    const f = await openLocal({ retentionCheckMs: 20, commitIntervalMs: 5 })
    t.teardown(() => f.close())
    await f.bus.ensureTopics({ emptied: { partitions: 1 } })
    const seen: string[] = []
    const consume = () =>
      f.bus.subscribe({
        group: 'g',
        topics: ['emptied'],
        handler: async (b) => void seen.push(...b.records.map((r) => `${r.offset}:${r.value}`)),
      })
    let sub = await consume()
    await f.bus.publish(
      'emptied',
      ['a', 'b', 'c'].map((value) => ({ key: 'k', value })),
    )
    await eventually(async () => ((await countLogValues(f.rocks, 'emptied')) === 0 ? true : undefined), 5_000)
    await sub.stop()
    await f.reopen()
    await f.bus.ensureTopics({ emptied: { partitions: 1 } })
    sub = await consume()
    t.teardown(() => sub.stop())
    await f.bus.publish(
      'emptied',
      ['d', 'e'].map((value) => ({ key: 'k', value })),
    )
    await eventually(async () => (seen.length === 5 ? true : undefined), 5_000)
    t.same(seen, ['0:a', '1:b', '2:c', '3:d', '4:e'], 'offsets go on from 3, and the group reads d and e')
  },
)
