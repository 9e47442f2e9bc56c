// The Bus conformance suite on the @platformatic/kafka adapter (SLUICE_KAFKA_CLIENT=platformatic),
// against the shared real Kafka broker, as bus-kafka.test.ts does for kafkajs.
import { createPlatformaticKafkaBus } from '../../bus/kafka-platformatic.ts'
import { kafkaConformance } from './bus-kafka-client.ts'

kafkaConformance('Kafka bus (@platformatic/kafka)', createPlatformaticKafkaBus)
