// The Bus conformance suite on the @platformatic/kafka adapter (SLUICE_KAFKA_CLIENT=platformatic),
// against the shared real Kafka broker (tests/infra/up.ts), as bus-kafka.test.ts does for kafkajs.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import pino from 'pino'
import { createPlatformaticKafkaBus } from '../../bus/kafka-platformatic.ts'
import type { Bus } from '../../bus/types.ts'
import { testServices } from '../infra/services.ts'
import { busSuite } from './bus-suite.ts'

const log = pino({ level: 'silent' })
const brokers = testServices().kafkaBrokers
const unique = () => `bus-${randomUUID().slice(0, 12)}`

busSuite(
  t,
  'Kafka bus (@platformatic/kafka)',
  async () => {
    const open = () => createPlatformaticKafkaBus({ brokers, clientId: 'sluice-test', sessionTimeoutMs: 6000 }, log)
    const buses: Bus[] = [await open()]
    return {
      bus: buses[0],
      async reopen() {
        await buses[buses.length - 1].close()
        buses.push(await open())
        return buses[buses.length - 1]
      },
      async close() {
        await Promise.all(buses.map((b) => b.close()))
      },
    }
  },
  unique,
)
