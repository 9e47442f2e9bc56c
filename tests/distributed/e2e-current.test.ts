// The distributed pipeline end to end (e2e-suite.ts) with the current ClickHouse release (26.9) as the store.
// On the default Kafka client (@platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t from 'tap'
import { clickHouseServers } from '../infra/services.ts'
import { e2eSuite } from './e2e-suite.ts'

await e2eSuite(t, clickHouseServers().find((s) => s.server === 'current')!.url)
