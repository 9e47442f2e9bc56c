// The Kafka Bus a test runs on, on the client chosen as config/config.ts and server/distributed.ts choose
// it: SLUICE_KAFKA_CLIENT (platformatic by default, or kafkajs). Spawned nodes and members are given
// it explicitly (SLUICE_KAFKA_CLIENT: kafkaClient), so they run on the client the test means. The
// settings a test leaves out are the config's defaults (config/config.ts), as a node started with no
// Kafka settings would have them.
import type { Logger } from 'pino'
import { createKafkaBus, type KafkaBus } from '../../bus/kafka.ts'
import { kafkaClients, type KafkaClientName } from '../../bus/kafka-clients.ts'
import type { KafkaBusConfig } from '../../bus/kafka-config.ts'
import { loadConfig } from '../../config/config.ts'

export const kafkaClient: KafkaClientName =
  process.env.SLUICE_KAFKA_CLIENT?.toLowerCase() === 'kafkajs' ? 'kafkajs' : 'platformatic'

export type TestKafkaBusConfig = Pick<KafkaBusConfig, 'brokers' | 'clientId'> & Partial<KafkaBusConfig>

export function testKafkaBusConfig(fields: TestKafkaBusConfig): KafkaBusConfig {
  const defaults = loadConfig('dev', {}, {})
  return {
    sessionTimeoutMs: defaults.kafkaSessionTimeoutMs,
    heartbeatIntervalMs: defaults.kafkaHeartbeatIntervalMs,
    compression: defaults.kafkaCompression,
    groupPrefix: `${defaults.topicPrefix}.`,
    ...fields,
  }
}

/** A Kafka Bus on `client` (the test's, by default) with the config's defaults for what `fields` leaves out. */
export function createTestKafkaBus(
  fields: TestKafkaBusConfig,
  log: Logger,
  client: KafkaClientName = kafkaClient,
): Promise<KafkaBus> {
  return createKafkaBus(kafkaClients[client], testKafkaBusConfig(fields), log)
}
