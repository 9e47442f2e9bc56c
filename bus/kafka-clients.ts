// The Kafka clients the Bus runs on, by the name SLUICE_KAFKA_CLIENT gives them (config/config.ts).
import type { KafkaClientFactory } from './kafka-port.ts'
import { kafkajsClient } from './kafka-kafkajs.ts'
import { platformaticClient } from './kafka-platformatic.ts'

export const kafkaClients = {
  platformatic: platformaticClient,
  kafkajs: kafkajsClient,
} as const satisfies Record<string, KafkaClientFactory>

export type KafkaClientName = keyof typeof kafkaClients
