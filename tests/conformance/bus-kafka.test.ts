// The Bus conformance suite on the @platformatic/kafka client, the default (SLUICE_KAFKA_CLIENT),
// against the shared real Kafka broker; bus-kafka-kafkajs.test.ts runs it on kafkajs.
import { kafkaConformance } from './bus-kafka-client.ts'

kafkaConformance('Kafka bus (@platformatic/kafka)', 'platformatic')
