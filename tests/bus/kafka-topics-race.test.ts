// Every role creates the topics it uses when it starts, and on Kubernetes all roles start at once:
// nodes creating the same new topics at the same moment must all start. On both Kafka clients,
// against the shared real broker. (@platformatic/kafka reports "already exists" as a protocol error
// named TOPIC_ALREADY_EXISTS, not by number; a check by number made every node but one fail.)
import t from 'tap'
import { randomUUID } from 'node:crypto'
import pino from 'pino'
import { testServices } from '../infra/services.ts'
import { createTestKafkaBus } from '../helpers/kafka-bus.ts'

const log = pino({ level: 'silent' })
const brokers = testServices().kafkaBrokers

for (const client of ['platformatic', 'kafkajs'] as const) {
  t.test(`${client}: five nodes create the same new topics at once, and all of them start`, async (t) => {
    const prefix = `race-${randomUUID().slice(0, 8)}`
    const specs = Object.fromEntries(['raw', 'events', 'runs'].map((name) => [`${prefix}.${name}`, { partitions: 4 }]))
    const buses = await Promise.all(
      Array.from({ length: 5 }, (_, i) => createTestKafkaBus({ brokers, clientId: `race-${i}` }, log, client)),
    )
    t.teardown(() => Promise.all(buses.map((b) => b.close())))
    const outcomes = await Promise.allSettled(buses.map((b) => b.ensureTopics(specs)))
    t.same(
      outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : o.status)),
      Array(5).fill('fulfilled'),
    )
    // The topics are there, with the partitions asked for: a record goes to the last partition of each.
    for (const topic of Object.keys(specs))
      await buses[4].publish(topic, [{ key: 'k', value: Buffer.from('v'), partition: 3 }])
  })
}
