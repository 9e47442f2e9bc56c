// The Kafka Bus adapter a test runs on, chosen as cli/config.ts and cli/distributed.ts choose it:
// SLUICE_KAFKA_CLIENT (platformatic by default, or kafkajs). The *-kafkajs.test.ts files set it and
// run the same tests again on bus/kafka.ts; spawned nodes and members are
// given it explicitly (SLUICE_KAFKA_CLIENT: kafkaClient), so they run on the client the test means.
import { createKafkaBus } from '../../bus/kafka.ts'
import { createPlatformaticKafkaBus } from '../../bus/kafka-platformatic.ts'

export const kafkaClient = process.env.SLUICE_KAFKA_CLIENT?.toLowerCase() === 'kafkajs' ? 'kafkajs' : 'platformatic'
export const createTestKafkaBus = kafkaClient === 'platformatic' ? createPlatformaticKafkaBus : createKafkaBus
