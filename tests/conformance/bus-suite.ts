// The Bus contract, run against every adapter (local RocksDB log; Kafka against a real broker, on
// each client).
import type { Test } from 'tap'
import type { Batch, Bus, ConsumedRecord, SubscribeOptions } from '../../bus/types.ts'
import { eventually } from '../helpers/server.ts'
import { busReadSuite, rec } from './bus-read-suite.ts'

export interface BusFixture {
  bus: Bus
  /** A second bus over the same durable log, after this one closed (a restart, or another node). */
  reopen(): Promise<Bus>
  /** Another bus over the same log while this one runs (another node): with `groupMembers: 'many'`. */
  peer?(): Promise<Bus>
  close(): Promise<void>
}

/** What an adapter allows, as its setup declares it: the tests of what it does not allow are left out. */
export interface BusCapabilities {
  /** Kafka: several members of one group at once (processes); the local log allows one per group and process. */
  groupMembers: 'one' | 'many'
}

export function busSuite(
  t: Test,
  name: string,
  open: () => Promise<BusFixture>,
  unique: () => string,
  capabilities: BusCapabilities,
): void {
  t.test(`${name}: a record published is consumed with its key and value`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const topic = unique()
    await f.bus.ensureTopics({ [topic]: { partitions: 3 } })
    await f.bus.publish(topic, [rec('k1', 'hello'), rec('k2', 'world')])
    const seen: string[] = []
    const sub = await f.bus.subscribe({
      group: unique(),
      topics: [topic],
      handler: async (b) => void seen.push(...b.records.map((r) => `${r.key}=${r.value}`)),
    })
    t.teardown(() => sub.stop())
    await eventually(async () => (seen.length === 2 ? true : undefined), 30_000)
    t.same(seen.sort(), ['k1=hello', 'k2=world'])
  })

  t.test(`${name}: records with one key keep their order on one partition`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const topic = unique()
    await f.bus.ensureTopics({ [topic]: { partitions: 4 } })
    await f.bus.publish(
      topic,
      Array.from({ length: 50 }, (_, i) => rec('same', String(i))),
    )
    const seen: Array<{ p: number; v: string }> = []
    const sub = await f.bus.subscribe({
      group: unique(),
      topics: [topic],
      handler: async (b) => void seen.push(...b.records.map((r) => ({ p: b.partition, v: r.value.toString() }))),
    })
    t.teardown(() => sub.stop())
    await eventually(async () => (seen.length === 50 ? true : undefined), 30_000)
    t.equal(new Set(seen.map((s) => s.p)).size, 1, 'one partition')
    t.same(
      seen.map((s) => s.v),
      Array.from({ length: 50 }, (_, i) => String(i)),
    )
  })

  t.test(`${name}: a batch whose handler throws is delivered again (commit after process)`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const topic = unique()
    await f.bus.ensureTopics({ [topic]: { partitions: 1 } })
    await f.bus.publish(topic, [rec('a', '1')])
    let calls = 0
    const delivered: string[] = []
    const sub = await f.bus.subscribe({
      group: unique(),
      topics: [topic],
      handler: async (b: Batch) => {
        calls++
        if (calls === 1) throw new Error('first delivery fails')
        delivered.push(...b.records.map((r) => r.value.toString()))
      },
    })
    t.teardown(() => sub.stop())
    await eventually(async () => (delivered.length > 0 ? true : undefined), 30_000)
    t.ok(calls >= 2, 'handler was called again')
    t.same(delivered, ['1'])
  })

  t.test(`${name}: a group resumes after its committed offset when it comes back`, async (t) => {
    const f = await open()
    const topic = unique()
    const group = unique()
    await f.bus.ensureTopics({ [topic]: { partitions: 2 } })
    await f.bus.publish(topic, [rec('a', '1'), rec('b', '2')])
    const first: string[] = []
    const sub = await f.bus.subscribe({
      group,
      topics: [topic],
      handler: async (b) => void first.push(...b.records.map((r) => r.value.toString())),
    })
    await eventually(async () => (first.length === 2 ? true : undefined), 30_000)
    await sub.stop()
    const bus2 = await f.reopen()
    t.teardown(() => f.close())
    await bus2.ensureTopics({ [topic]: { partitions: 2 } })
    await bus2.publish(topic, [rec('c', '3')])
    const second: string[] = []
    const sub2 = await bus2.subscribe({
      group,
      topics: [topic],
      handler: async (b) => void second.push(...b.records.map((r) => r.value.toString())),
    })
    t.teardown(() => sub2.stop())
    await eventually(async () => (second.length >= 1 ? true : undefined), 30_000)
    await new Promise((r) => setTimeout(r, 300))
    t.same(second, ['3'], 'only the record published after the commit')
  })

  t.test(`${name}: two groups each get every record; onAssign precedes the first batch`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const topic = unique()
    await f.bus.ensureTopics({ [topic]: { partitions: 2 } })
    await f.bus.publish(
      topic,
      Array.from({ length: 10 }, (_, i) => rec(`k${i}`, String(i))),
    )
    const counts = [0, 0]
    const assignedBeforeBatch: boolean[] = []
    const subs = await Promise.all(
      [0, 1].map(async (g) => {
        const assigned = new Set<number>()
        return f.bus.subscribe({
          group: unique(),
          topics: [topic],
          onAssign: async (tps) => {
            for (const tp of tps) for (const p of tp.partitions) assigned.add(p)
          },
          handler: async (b) => {
            assignedBeforeBatch.push(assigned.has(b.partition))
            counts[g] += b.records.length
          },
        })
      }),
    )
    t.teardown(() => Promise.all(subs.map((s) => s.stop())))
    await eventually(async () => (counts[0] === 10 && counts[1] === 10 ? true : undefined), 30_000)
    t.same(counts, [10, 10])
    t.ok(assignedBeforeBatch.every(Boolean), 'every batch came after its partition was assigned')
  })

  t.test(`${name}: publish resolves only with records a new consumer can read (durable)`, async (t) => {
    const f = await open()
    const topic = unique()
    await f.bus.ensureTopics({ [topic]: { partitions: 1 } })
    await Promise.all(Array.from({ length: 20 }, (_, i) => f.bus.publish(topic, [rec('k', String(i))])))
    const bus2 = await f.reopen()
    t.teardown(() => f.close())
    await bus2.ensureTopics({ [topic]: { partitions: 1 } })
    const seen: string[] = []
    const sub = await bus2.subscribe({
      group: unique(),
      topics: [topic],
      handler: async (b) => void seen.push(...b.records.map((r) => r.value.toString())),
    })
    t.teardown(() => sub.stop())
    await eventually(async () => (seen.length === 20 ? true : undefined), 30_000)
    t.equal(seen.length, 20)
  })

  t.test(`${name}: a live consumer gets every record of many overlapping publishes, each once`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const topic = unique()
    await f.bus.ensureTopics({ [topic]: { partitions: 2 } })
    const seen = new Map<string, number>()
    const sub = await f.bus.subscribe({
      group: unique(),
      topics: [topic],
      handler: async (b) => {
        for (const r of b.records) seen.set(r.value.toString(), (seen.get(r.value.toString()) ?? 0) + 1)
      },
    })
    t.teardown(() => sub.stop())
    const total = 2000
    const publishes: Array<Promise<void>> = []
    for (let i = 0; i < total; i += 10) {
      publishes.push(
        f.bus.publish(
          topic,
          Array.from({ length: 10 }, (_, j) => rec(`k${(i + j) % 7}`, String(i + j))),
        ),
      )
      if (i % 100 === 0) await new Promise((r) => setImmediate(r))
    }
    await Promise.all(publishes)
    await eventually(async () => (seen.size === total ? true : undefined), 30_000)
    await new Promise((r) => setTimeout(r, 200))
    t.equal(seen.size, total)
    t.ok(
      [...seen.values()].every((n) => n === 1),
      'each once',
    )
  })

  busReadSuite(t, name, open, unique)

  t.test(`${name}: an empty value on a compacted topic is delivered as an empty value (tombstone)`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const topic = unique()
    await f.bus.ensureTopics({ [topic]: { partitions: 1, compacted: true } })
    await f.bus.publish(topic, [rec('doc', 'v1')])
    await f.bus.publish(topic, [{ key: 'doc', value: Buffer.alloc(0) }])
    const read: ConsumedRecord[] = []
    await f.bus.readPartition(topic, 0, async (page) => void read.push(...page))
    const last = read.filter((r) => r.key === 'doc').at(-1)
    t.ok(Buffer.isBuffer(last?.value), 'a Buffer')
    t.equal(last?.value.length, 0, 'empty')
    const consumed: ConsumedRecord[] = []
    const sub = await f.bus.subscribe({
      group: unique(),
      topics: [topic],
      handler: async (b) => void consumed.push(...b.records),
    })
    t.teardown(() => sub.stop())
    await eventually(async () => (consumed.some((r) => r.value.length === 0) ? true : undefined), 30_000)
    t.equal(consumed.at(-1)?.key, 'doc')
  })

  t.test(`${name}: a record with an explicit partition goes there, whatever its key`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const topic = unique()
    await f.bus.ensureTopics({ [topic]: { partitions: 3 } })
    await f.bus.publish(
      topic,
      ['a', 'b', 'c', 'd', 'e'].map((key) => ({ key, value: Buffer.from(key), partition: 2 })),
    )
    const byPartition: string[][] = []
    for (let p = 0; p < 3; p++) {
      const keys: string[] = []
      await f.bus.readPartition(topic, p, async (page) => void keys.push(...page.map((r) => r.key)))
      byPartition.push(keys)
    }
    t.same(byPartition, [[], [], ['a', 'b', 'c', 'd', 'e']])
  })

  t.test(`${name}: consumer lag counts, per partition held, the records its group has not committed`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const topic = unique()
    const group = unique()
    await f.bus.ensureTopics({ [topic]: { partitions: 1 } })
    await f.bus.publish(
      topic,
      Array.from({ length: 5 }, (_, i) => rec(`k${i}`, String(i))),
    )
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const sub = await f.bus.subscribe({ group, topics: [topic], handler: () => held })
    const lag = async () => (await f.bus.consumerLag()).find((l) => l.group === group && l.topic === topic)
    const lagIs = (records: number) => async () => ((await lag())?.records === records ? true : undefined)
    await eventually(lagIs(5), 30_000)
    t.same(await lag(), { group, topic, partition: 0, records: 5 }, 'nothing handled yet: the whole partition')
    await f.bus.publish(topic, [rec('k5', '5'), rec('k6', '6')])
    await eventually(lagIs(7), 30_000)
    t.pass('grows with each record published while the handler is stuck')
    release()
    await eventually(lagIs(0), 30_000)
    t.pass('0 once every record is handled and committed')
    await sub.stop()
    t.equal(await lag(), undefined, 'a stopped subscription reports nothing')
  })

  t.test(`${name}: consumer lag names a group made unique per process by its metricsGroup`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const topic = unique()
    const metricsGroup = unique()
    await f.bus.ensureTopics({ [topic]: { partitions: 1 } })
    await f.bus.publish(topic, [rec('k', 'v')])
    const sub = await f.bus.subscribe({
      group: `${metricsGroup}.${unique()}`,
      metricsGroup,
      topics: [topic],
      handler: async () => {},
    })
    t.teardown(() => sub.stop())
    const groups = async () => (await f.bus.consumerLag()).filter((l) => l.topic === topic).map((l) => l.group)
    await eventually(async () => ((await groups()).length > 0 ? true : undefined), 30_000)
    t.same(await groups(), [metricsGroup])
  })

  if (capabilities.groupMembers === 'many') groupMemberTests(t, name, open, unique)
}

/** Which partitions one member owns, from its onAssign and onRevoke; and its batches, checked against them. */
function tracked(options: Pick<SubscribeOptions, 'group' | 'topics' | 'handler'>) {
  const owned = new Set<number>()
  const events: string[] = []
  const outside: number[] = []
  const subscribe: SubscribeOptions = {
    ...options,
    onAssign: async (tps) => {
      for (const p of tps.flatMap((tp) => tp.partitions)) owned.add(p)
      events.push(`assign ${tps.flatMap((tp) => tp.partitions)}`)
    },
    onRevoke: async (tps) => {
      for (const p of tps.flatMap((tp) => tp.partitions)) owned.delete(p)
      events.push(`revoke ${tps.flatMap((tp) => tp.partitions)}`)
    },
    handler: async (batch) => {
      if (!owned.has(batch.partition)) outside.push(batch.partition)
      events.push(`batch ${batch.partition}`)
      await options.handler(batch)
    },
  }
  return { owned, events, outside, subscribe }
}

const sorted = (values: Iterable<number>) => [...values].sort((a, b) => a - b)

function groupMemberTests(t: Test, name: string, open: () => Promise<BusFixture>, unique: () => string): void {
  t.test(
    `${name}: each member of a group reports lag for the partitions it owns: end minus committed offset`,
    async (t) => {
      const f = await open()
      t.teardown(() => f.close())
      const peer = await f.peer!()
      const topic = unique()
      const group = unique()
      await f.bus.ensureTopics({ [topic]: { partitions: 4 } })
      let holding = false
      let handled = 0
      const handler = async (batch: Batch) => {
        if (holding) throw new Error('held: redelivered until released')
        handled += batch.records.length
      }
      const a = tracked({ group, topics: [topic], handler })
      const b = tracked({ group, topics: [topic], handler })
      const subs = [await f.bus.subscribe(a.subscribe), await peer.subscribe(b.subscribe)]
      t.teardown(() => Promise.all(subs.map((s) => s.stop())))
      await eventually(async () => (a.owned.size === 2 && b.owned.size === 2 ? true : undefined), 60_000, 50)
      t.same(sorted([...a.owned, ...b.owned]), [0, 1, 2, 3], 'the two members split the partitions')

      const publishEach = (n: number, what: string) =>
        f.bus.publish(
          topic,
          [0, 1, 2, 3].flatMap((partition) =>
            Array.from({ length: n }, (_, i) => ({ key: `${what}-${i}`, value: `${what}-${i}`, partition })),
          ),
        )
      const lagOf = async (bus: Bus) =>
        (await bus.consumerLag())
          .filter((l) => l.topic === topic)
          .sort((x, y) => x.partition - y.partition)
          .map(({ partition, records }) => ({ partition, records }))
      const expected = (owned: Set<number>, records: number) =>
        sorted(owned).map((partition) => ({ partition, records }))
      const lagsAre = (records: number) => async () => {
        const [lagA, lagB] = [await lagOf(f.bus), await lagOf(peer)]
        const want = [expected(a.owned, records), expected(b.owned, records)]
        return JSON.stringify([lagA, lagB]) === JSON.stringify(want) ? [lagA, lagB] : undefined
      }
      await publishEach(2, 'handled')
      await eventually(async () => (handled >= 8 ? lagsAre(0)() : undefined), 30_000)
      t.pass('0 on every partition once its records are handled and committed, each member its own partitions')
      holding = true
      await publishEach(3, 'held')
      const [lagA, lagB] = await eventually(lagsAre(3), 30_000)
      t.same(lagA, expected(a.owned, 3), 'a member reports only the partitions it owns, 5 records - 2 committed')
      t.same(lagB, expected(b.owned, 3), 'and so does the other, on its own bus')
      holding = false
      await eventually(lagsAre(0), 30_000)
      t.same([...a.outside, ...b.outside], [], 'no batch outside an assignment, on either member')
    },
  )

  t.test(`${name}: a co-partitioned group gives partition i of every topic to one member`, async (t) => {
    const f = await open()
    t.teardown(() => f.close())
    const peer = await f.peer!()
    const topics = [unique(), unique()]
    const group = unique()
    // Three partitions for two members: round robin over both topics would split them differently.
    await f.bus.ensureTopics(Object.fromEntries(topics.map((topic) => [topic, { partitions: 3 }])))
    const member = () => {
      const owned = new Set<string>()
      const subscribe: SubscribeOptions = {
        group,
        topics,
        coPartitioned: true,
        handler: async () => {},
        onAssign: async (tps) => {
          for (const { topic, partitions } of tps)
            for (const p of partitions) owned.add(`${topics.indexOf(topic)}:${p}`)
        },
        onRevoke: async (tps) => {
          for (const { topic, partitions } of tps)
            for (const p of partitions) owned.delete(`${topics.indexOf(topic)}:${p}`)
        },
      }
      return { owned, subscribe }
    }
    const [a, b] = [member(), member()]
    const subs = [await f.bus.subscribe(a.subscribe), await peer.subscribe(b.subscribe)]
    t.teardown(() => Promise.all(subs.map((s) => s.stop())))
    const split = () => a.owned.size > 0 && b.owned.size > 0 && a.owned.size + b.owned.size === 6
    await eventually(async () => (split() ? true : undefined), 60_000, 50)
    const of = (owned: Set<string>, topic: number) =>
      sorted([...owned].filter((o) => o.startsWith(`${topic}:`)).map((o) => Number(o.split(':')[1])))
    t.same(sorted([...of(a.owned, 0), ...of(b.owned, 0)]), [0, 1, 2], 'the two members split the partitions')
    t.same(of(a.owned, 1), of(a.owned, 0), 'one member holds the same partition numbers of both topics')
    t.same(of(b.owned, 1), of(b.owned, 0), 'and so does the other')
  })

  t.test(
    `${name}: a member that stops revokes its partitions after its last batch; another member takes them over`,
    async (t) => {
      const f = await open()
      t.teardown(() => f.close())
      const peer = await f.peer!()
      const topic = unique()
      const group = unique()
      await f.bus.ensureTopics({ [topic]: { partitions: 4 } })
      const consumed = new Set<string>()
      const handler = async (batch: Batch) => void batch.records.forEach((r) => consumed.add(r.value.toString()))
      const a = tracked({ group, topics: [topic], handler })
      const b = tracked({ group, topics: [topic], handler })
      await f.bus.subscribe(a.subscribe)
      t.equal(a.owned.size, 4, 'alone, the first member owns every partition once subscribe resolved')
      const subB = await peer.subscribe(b.subscribe)
      await eventually(async () => (a.owned.size === 2 && b.owned.size === 2 ? true : undefined), 60_000, 50)
      const ownedB = sorted(b.owned)
      const values = (what: string) => Array.from({ length: 40 }, (_, i) => `${what}-${i}`)
      const publish = (what: string) =>
        f.bus.publish(
          topic,
          values(what).map((v) => ({ key: v, value: v })),
        )
      const consumedAll = (what: string) => async () => (values(what).every((v) => consumed.has(v)) ? true : undefined)
      await publish('split')
      await eventually(consumedAll('split'), 30_000)
      t.ok(
        b.events.some((e) => e.startsWith('batch')),
        'the second member consumed its own partitions',
      )

      await subB.stop()
      t.equal(b.events.at(-1), `revoke ${ownedB}`, 'the stopped member revoked its partitions last, after its batches')
      await eventually(async () => (a.owned.size === 4 ? true : undefined), 60_000, 50)
      const lastAssign = a.events.filter((e) => e.startsWith('assign')).at(-1)
      t.equal(lastAssign, `assign ${ownedB}`, "the remaining member's onAssign names them")
      await publish('after')
      await eventually(consumedAll('after'), 30_000)
      t.same([...a.outside, ...b.outside], [], 'no batch outside an assignment, on either member')
    },
  )
}
