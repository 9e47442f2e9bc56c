// The distributed pipeline end to end (e2e-suite.ts) with Debian's ClickHouse 18.16 as the store.
// On the default Kafka client (SLUICE_KAFKA_CLIENT, @platformatic/kafka); kafkajs in e2e-kafkajs.test.ts.
import t from 'tap'
import { clickHouseServers } from '../infra/services.ts'
import { e2eSuite } from './e2e-suite.ts'

await e2eSuite(t, clickHouseServers().find((s) => s.server === 'debian')!.url)
