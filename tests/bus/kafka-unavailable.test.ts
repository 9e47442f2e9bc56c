// Kafka-only: publish never hangs and never claims durability it does not have. A private
// 1-broker cluster is stopped (or frozen) under the bus: publish rejects with LOG_UNAVAILABLE
// within ~1 s (what ingest turns into a 503), and the same bus publishes again once the broker
// is back, without being recreated. On both Kafka clients: how each one's producer fails and
// reconnects is its adapter's (the core retires a failed producer; tests/distributed/broker-down
// shows the 503 through ingest on the default client).
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import pino from 'pino'
import { createTestKafkaBus } from '../helpers/kafka-bus.ts'
import type { KafkaClientName } from '../../bus/kafka-clients.ts'
import type { Bus, ConsumedRecord } from '../../bus/types.ts'
import { startKafka, type KafkaCluster } from '../infra/kafka.ts'
import { eventually } from '../helpers/server.ts'

const log = pino({ level: 'silent' })
const rec = (value: string) => ({ key: value, value: Buffer.from(value) })

/** Resolves with how long publish took to reject, or fails the test if it resolved. */
async function rejectionTimeMs(t: Test, publish: Promise<void>): Promise<number> {
  const started = Date.now()
  await t.rejects(publish, { code: 'LOG_UNAVAILABLE' })
  return Date.now() - started
}

async function readAll(bus: Bus, topic: string, partitions: number): Promise<string[]> {
  const values: string[] = []
  for (let p = 0; p < partitions; p++)
    await bus.readPartition(
      topic,
      p,
      async (records: ConsumedRecord[]) => void values.push(...records.map((r) => r.value.toString())),
    )
  return values
}

let cluster: KafkaCluster
const buses: Bus[] = []

t.before(async () => {
  cluster = await startKafka({ brokers: 1 })
})
t.teardown(async () => {
  await Promise.all(buses.map((b) => b.close()))
  await cluster?.stop()
})

for (const client of ['platformatic', 'kafkajs'] as const) outages(client)

function outages(client: KafkaClientName): void {
  let bus: Bus
  const topic = `unavailable-${client}-${randomUUID().slice(0, 8)}`
  const opened = async () => {
    if (bus) return bus
    bus = await createTestKafkaBus({ brokers: cluster.brokers, clientId: 'sluice-unavailable-test' }, log, client)
    buses.push(bus)
    await bus.ensureTopics({ [topic]: { partitions: 2 } })
    return bus
  }

  t.test(
    `${client}: a frozen broker (SIGSTOP): publish rejects LOG_UNAVAILABLE within 1.5 s, and works again after SIGCONT`,
    async (t) => {
      const bus = await opened()
      await bus.publish(topic, [rec('before-freeze')])
      const [pid] = cluster.pids()
      process.kill(-pid, 'SIGSTOP')
      let frozen = true
      t.teardown(() => {
        if (frozen) process.kill(-pid, 'SIGCONT')
      })
      // Every thread of the broker stopped (state T) before anything is sent: on a loaded machine
      // the signal can take a moment, and a request answered meanwhile would be a false failure.
      await eventually(
        async () =>
          readdirSync(`/proc/${pid}/task`).every((task) =>
            readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8').split(') ')[1]?.startsWith('T'),
          )
            ? true
            : undefined,
        5_000,
        10,
      )
      // Requests to a frozen broker hang until the client's request timeout (10 s on kafkajs): the deadline must win.
      const single = await rejectionTimeMs(t, bus.publish(topic, [rec('frozen-1')]))
      const concurrent = await Promise.all(
        Array.from({ length: 20 }, (_, i) => rejectionTimeMs(t, bus.publish(topic, [rec(`frozen-many-${i}`)]))),
      )
      t.ok(single < 1500, `one publish rejected in ${single} ms`)
      t.ok(Math.max(...concurrent) < 1500, `20 concurrent publishes rejected in at most ${Math.max(...concurrent)} ms`)
      process.kill(-pid, 'SIGCONT')
      frozen = false
      await eventually(
        () =>
          bus.publish(topic, [rec('after-thaw')]).then(
            () => true,
            () => undefined,
          ),
        60_000,
        200,
      )
      t.ok((await readAll(bus, topic, 2)).includes('after-thaw'), 'the record acknowledged after the thaw is readable')
    },
  )

  t.test(
    `${client}: a stopped broker: publish rejects LOG_UNAVAILABLE within 1.5 s, and publishes again after a restart`,
    async (t) => {
      const bus = await opened()
      await bus.publish(topic, [rec('before-stop')])
      await cluster.stopBroker(0)
      const times: number[] = []
      for (let i = 0; i < 3; i++) times.push(await rejectionTimeMs(t, bus.publish(topic, [rec(`while-down-${i}`)])))
      t.ok(Math.max(...times) < 1500, `each publish rejected within 1.5 s (${times.join(', ')} ms)`)
      await cluster.startBroker(0)
      const recoveredAt = Date.now()
      await eventually(
        () =>
          bus.publish(topic, [rec('after-restart')]).then(
            () => true,
            () => undefined,
          ),
        60_000,
        200,
      )
      t.comment(`publishing again ${Date.now() - recoveredAt} ms after the broker was back`)
      await bus.publish(
        topic,
        Array.from({ length: 50 }, (_, i) => rec(`after-restart-${i}`)),
      )
      const values = await readAll(bus, topic, 2)
      t.ok(
        values.includes('before-stop') && values.includes('after-restart'),
        'records acknowledged before and after the outage are durable',
      )
      t.equal(values.filter((v) => v.startsWith('after-restart-')).length, 50, 'a batch after recovery is complete')
    },
  )
}
