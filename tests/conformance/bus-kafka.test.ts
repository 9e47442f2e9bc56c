// The Bus conformance suite against the shared real Kafka broker (tests/infra/up.ts).
import t from 'tap'
import { randomUUID } from 'node:crypto'
import pino from 'pino'
import { createKafkaBus } from '../../bus/kafka.ts'
import type { Bus } from '../../bus/types.ts'
import { testServices } from '../infra/services.ts'
import { busSuite } from './bus-suite.ts'

const log = pino({ level: 'silent' })
const brokers = testServices().kafkaBrokers
const unique = () => `bus-${randomUUID().slice(0, 12)}`

busSuite(
  t,
  'Kafka bus',
  async () => {
    const open = () => createKafkaBus({ brokers, clientId: 'sluice-test', sessionTimeoutMs: 6000 }, log)
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
