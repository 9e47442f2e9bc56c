// The Bus conformance suite on one Kafka client, against the shared real broker
// (tests/infra/up.ts): bus-kafka.test.ts runs it on @platformatic/kafka (the default),
// bus-kafka-kafkajs.test.ts on kafkajs. Kafka allows several members of one group at once.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import pino from 'pino'
import type { KafkaClientName } from '../../bus/kafka-clients.ts'
import type { Bus } from '../../bus/types.ts'
import { testServices } from '../infra/services.ts'
import { createTestKafkaBus } from '../helpers/kafka-bus.ts'
import { busSuite } from './bus-suite.ts'

export function kafkaConformance(name: string, client: KafkaClientName): void {
  const log = pino({ level: 'silent' })
  const brokers = testServices().kafkaBrokers
  busSuite(
    t,
    name,
    async () => {
      const open = () => createTestKafkaBus({ brokers, clientId: 'sluice-test' }, log, client)
      const buses: Bus[] = [await open()]
      return {
        bus: buses[0],
        async reopen() {
          await buses[buses.length - 1].close()
          buses.push(await open())
          return buses[buses.length - 1]
        },
        async peer() {
          buses.push(await open())
          return buses[buses.length - 1]
        },
        async close() {
          await Promise.all(buses.map((b) => b.close()))
        },
      }
    },
    () => `bus-${randomUUID().slice(0, 12)}`,
    { groupMembers: 'many' },
  )
}
