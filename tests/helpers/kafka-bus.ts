// The Kafka Bus adapter a test runs on, chosen as cli/distributed.ts chooses it: SLUICE_KAFKA_CLIENT
// (kafkajs by default, or platformatic). The *-platformatic.test.ts files set it and run the same
// tests again on bus/kafka-platformatic.ts; spawned nodes and members inherit it.
import { createKafkaBus } from '../../bus/kafka.ts'
import { createPlatformaticKafkaBus } from '../../bus/kafka-platformatic.ts'

export const kafkaClient = process.env.SLUICE_KAFKA_CLIENT === 'platformatic' ? 'platformatic' : 'kafkajs'
export const createTestKafkaBus = kafkaClient === 'platformatic' ? createPlatformaticKafkaBus : createKafkaBus
