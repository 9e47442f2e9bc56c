// The Bus contract's reads outside any group (readPartition: what a stateful stage restores from, and
// the wait-key registry reads on from where it ended), run by busSuite against every adapter.
import type { Test } from 'tap'
import type { Bus, ConsumedRecord } from '../../bus/types.ts'

export const rec = (key: string, value: string) => ({ key, value: Buffer.from(value) })

export function busReadSuite(
  t: Test,
  name: string,
  open: () => Promise<{ bus: Bus; close(): Promise<void> }>,
  unique: () => string,
): void {
  t.test(
    `${name}: readPartition reads each partition from its beginning to its end, in order, outside any group`,
    async (t) => {
      const f = await open()
      t.teardown(() => f.close())
      const topic = unique()
      await f.bus.ensureTopics({ [topic]: { partitions: 3 } })
      const published = Array.from({ length: 60 }, (_, i) => rec(`k${i % 6}`, String(i)))
      await f.bus.publish(topic, published.slice(0, 30))
      await f.bus.publish(topic, published.slice(30))
      const byPartition: ConsumedRecord[][] = []
      for (let p = 0; p < 3; p++) {
        const records: ConsumedRecord[] = []
        await f.bus.readPartition(topic, p, async (page) => void records.push(...page))
        byPartition.push(records)
      }
      const all = byPartition.flat()
      t.same(
        all.map((r) => r.value.toString()).sort(),
        published.map((r) => r.value.toString()).sort(),
        'every record once',
      )
      for (const records of byPartition) {
        const offsets = records.map((r) => BigInt(r.offset))
        t.ok(
          offsets.every((o, i) => i === 0 || o > offsets[i - 1]),
          'offsets increase',
        )
      }
      for (let k = 0; k < 6; k++) {
        const holders = byPartition.filter((records) => records.some((r) => r.key === `k${k}`))
        t.equal(holders.length, 1, `key k${k} is on one partition`)
        const values = holders[0].filter((r) => r.key === `k${k}`).map((r) => Number(r.value.toString()))
        t.same(
          values,
          values.slice().sort((a, b) => a - b),
          `key k${k} in publish order`,
        )
      }
      // From an offset: that record and the rest, though it is inside a batch (the first publish's second record).
      const first = byPartition[0]
      for (const from of [first[1], first[Math.floor(first.length / 2)]]) {
        const rest: ConsumedRecord[] = []
        await f.bus.readPartition(topic, 0, async (page) => void rest.push(...page), from.offset)
        t.same(
          rest.map((r) => r.offset),
          first.filter((r) => BigInt(r.offset) >= BigInt(from.offset)).map((r) => r.offset),
          `from offset ${from.offset}: the records at and after it`,
        )
      }
      const past: ConsumedRecord[] = []
      const end = String(BigInt(first[first.length - 1].offset) + 1n)
      await f.bus.readPartition(topic, 0, async (page) => void past.push(...page), end)
      t.equal(past.length, 0, 'from the end: nothing')
      const empty = unique()
      await f.bus.ensureTopics({ [empty]: { partitions: 2 } })
      let calls = 0
      await f.bus.readPartition(empty, 1, async () => void calls++)
      t.equal(calls, 0, 'an empty partition resolves at once with nothing')
    },
  )
}
