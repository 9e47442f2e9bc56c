// The Bus conformance suite on the kafkajs client (SLUICE_KAFKA_CLIENT=kafkajs), against the
// shared real Kafka broker, as bus-kafka.test.ts does for @platformatic/kafka, the default.
import { kafkaConformance } from './bus-kafka-client.ts'

kafkaConformance('Kafka bus (kafkajs)', 'kafkajs')
