// Kafka-only: a consumer group of several bus instances splits the partitions, and when one
// member leaves (closed) or dies (SIGKILL, found by the session timeout), another takes its
// partitions over, with onAssign before any batch and onRevoke after the last one.
// On the default Kafka client (SLUICE_KAFKA_CLIENT, @platformatic/kafka); kafkajs in kafka-group-kafkajs.test.ts.
import t from 'tap'
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { createTestKafkaBus, kafkaClient } from '../helpers/kafka-bus.ts'
import type { Bus, SubscribeOptions } from '../../bus/types.ts'
import { testServices } from '../infra/services.ts'
import { eventually } from '../helpers/server.ts'

const log = pino({ level: 'silent' })
const brokers = testServices().kafkaBrokers
const unique = (what: string) => `${what}-${randomUUID().slice(0, 12)}`
const PARTITIONS = 4

type Event =
  | { event: 'assign' | 'revoke'; partitions: number[] }
  | { event: 'batch'; partition: number; values: string[] }

/** Replays one member's events: which partitions it owns now, and whether any batch fell outside ownership. */
function ownership(events: Event[]): { owned: Set<number>; outside: string[] } {
  const owned = new Set<number>()
  const outside: string[] = []
  for (const e of events) {
    if (e.event === 'batch') {
      if (!owned.has(e.partition)) outside.push(`batch of partition ${e.partition} while not assigned`)
    } else if (e.event === 'assign') e.partitions.forEach((p) => owned.add(p))
    else e.partitions.forEach((p) => owned.delete(p))
  }
  return { owned, outside }
}

function member(
  events: Event[],
  consumed: Map<string, number>,
): Pick<SubscribeOptions, 'handler' | 'onAssign' | 'onRevoke'> {
  return {
    onAssign: async (tps) => void events.push({ event: 'assign', partitions: tps.flatMap((tp) => tp.partitions) }),
    onRevoke: async (tps) => void events.push({ event: 'revoke', partitions: tps.flatMap((tp) => tp.partitions) }),
    handler: async (batch) => {
      const values = batch.records.map((r) => r.value.toString())
      events.push({ event: 'batch', partition: batch.partition, values })
      for (const v of values) consumed.set(v, (consumed.get(v) ?? 0) + 1)
    },
  }
}

async function openBus(): Promise<Bus> {
  return createTestKafkaBus({ brokers, clientId: 'sluice-group-test', sessionTimeoutMs: 6000 }, log)
}

const records = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `${prefix}-${i}`, value: Buffer.from(`${prefix}-${i}`) }))

t.test('two members split the partitions; when one is closed the other takes them over', async (t) => {
  const topic = unique('group')
  const group = unique('g')
  const [a, b] = [await openBus(), await openBus()]
  t.teardown(() => Promise.all([a.close(), b.close()]))
  await a.ensureTopics({ [topic]: { partitions: PARTITIONS } })
  const consumed = new Map<string, number>()
  const eventsA: Event[] = []
  const eventsB: Event[] = []
  await a.subscribe({ group, topics: [topic], ...member(eventsA, consumed) })
  t.equal(ownership(eventsA).owned.size, PARTITIONS, 'alone, the first member owns every partition')
  const subB = await b.subscribe({ group, topics: [topic], ...member(eventsB, consumed) })
  await eventually(
    async () => (ownership(eventsA).owned.size === 2 && ownership(eventsB).owned.size === 2 ? true : undefined),
    60_000,
    50,
  )
  const [ownedA, ownedB] = [ownership(eventsA).owned, ownership(eventsB).owned]
  t.same([...ownedA, ...ownedB].sort(), [0, 1, 2, 3], 'the partitions are split, none owned twice')

  await a.publish(topic, records('split', 40))
  await eventually(
    async () => (records('split', 40).every((r) => consumed.has(r.value.toString())) ? true : undefined),
    30_000,
  )
  const batchPartitions = (events: Event[]) =>
    new Set(
      events.flatMap((e) => (e.event === 'batch' && e.values.some((v) => v.startsWith('split')) ? [e.partition] : [])),
    )
  t.ok(
    [...batchPartitions(eventsB)].every((p) => ownedB.has(p)) && batchPartitions(eventsB).size > 0,
    'the second member consumed its own partitions',
  )

  await subB.stop()
  t.same(
    eventsB.at(-1),
    { event: 'revoke', partitions: [...ownedB].sort() },
    'the closed member revoked its partitions last, after its batches',
  )
  await eventually(async () => (ownership(eventsA).owned.size === PARTITIONS ? true : undefined), 60_000, 50)
  t.pass('the remaining member was assigned the partitions of the closed one')
  await a.publish(topic, records('after', 40))
  await eventually(
    async () => (records('after', 40).every((r) => consumed.has(r.value.toString())) ? true : undefined),
    30_000,
  )
  const afterPartitions = new Set(
    eventsA.flatMap((e) => (e.event === 'batch' && e.values.some((v) => v.startsWith('after')) ? [e.partition] : [])),
  )
  t.same([...afterPartitions].sort(), [0, 1, 2, 3], 'and consumes all of them')
  t.same(
    [...ownership(eventsA).outside, ...ownership(eventsB).outside],
    [],
    'no batch outside an assignment, on either member',
  )
})

t.test(
  'a member whose process is killed loses its partitions to the survivor after the session timeout',
  { timeout: 120_000 },
  async (t) => {
    const topic = unique('group-kill')
    const group = unique('g')
    const a = await openBus()
    t.teardown(() => a.close())
    await a.ensureTopics({ [topic]: { partitions: PARTITIONS } })
    const consumed = new Map<string, number>()
    const eventsA: Event[] = []
    await a.subscribe({ group, topics: [topic], ...member(eventsA, consumed) })

    const fixture = fileURLToPath(new URL('./fixtures/kafka-member.ts', import.meta.url))
    const child = spawn(process.execPath, [fixture, brokers.join(','), topic, group], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, SLUICE_KAFKA_CLIENT: kafkaClient },
    })
    t.teardown(() => {
      child.kill('SIGKILL')
    })
    const eventsB: Event[] = []
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const parsed = JSON.parse(line) as Event | { event: 'ready' }
      if (parsed.event !== 'ready') eventsB.push(parsed)
    })
    await eventually(
      async () => (ownership(eventsA).owned.size === 2 && ownership(eventsB).owned.size === 2 ? true : undefined),
      60_000,
      50,
    )
    const ownedB = [...ownership(eventsB).owned].sort()
    t.equal(ownedB.length, 2, `the child process owns partitions ${ownedB}`)

    const killedAt = Date.now()
    child.kill('SIGKILL')
    await eventually(async () => (ownership(eventsA).owned.size === PARTITIONS ? true : undefined), 60_000, 50)
    t.comment(`survivor owned every partition ${Date.now() - killedAt} ms after the kill (session timeout 6 s)`)
    const lastAssign = eventsA.filter((e) => e.event === 'assign').at(-1)
    t.same(
      lastAssign,
      { event: 'assign', partitions: ownedB },
      "the survivor's onAssign names the dead member's partitions",
    )
    await a.publish(topic, records('after-kill', 40))
    await eventually(
      async () => (records('after-kill', 40).every((r) => consumed.has(r.value.toString())) ? true : undefined),
      30_000,
    )
    t.same(ownership(eventsA).outside, [], 'no batch outside an assignment')
  },
)
