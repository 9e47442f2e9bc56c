// Kafka-only, on both clients: when a member of a consumer group dies (SIGKILL, found by the
// session timeout), the survivor takes its partitions over, with onAssign before any batch. How a
// member that stops cleanly hands its partitions over is in the Bus suite (tests/conformance).
import t from 'tap'
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { createTestKafkaBus } from '../helpers/kafka-bus.ts'
import type { KafkaClientName } from '../../bus/kafka-clients.ts'
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

async function openBus(client: KafkaClientName): Promise<Bus> {
  return createTestKafkaBus({ brokers, clientId: 'sluice-group-test' }, log, client)
}

const records = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `${prefix}-${i}`, value: Buffer.from(`${prefix}-${i}`) }))

for (const client of ['platformatic', 'kafkajs'] as const)
  t.test(
    `${client}: a member whose process is killed loses its partitions to the survivor after the session timeout`,
    { timeout: 120_000 },
    async (t) => {
      const topic = unique('group-kill')
      const group = unique('g')
      const a = await openBus(client)
      t.teardown(() => a.close())
      await a.ensureTopics({ [topic]: { partitions: PARTITIONS } })
      const consumed = new Map<string, number>()
      const eventsA: Event[] = []
      await a.subscribe({ group, topics: [topic], ...member(eventsA, consumed) })

      const fixture = fileURLToPath(new URL('./fixtures/kafka-member.ts', import.meta.url))
      const child = spawn(process.execPath, [fixture, brokers.join(','), topic, group], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, SLUICE_KAFKA_CLIENT: client },
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
