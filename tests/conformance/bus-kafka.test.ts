// The Bus conformance suite on the kafkajs adapter, against the shared real Kafka broker.
import { createKafkaBus } from '../../bus/kafka.ts'
import { kafkaConformance } from './bus-kafka-client.ts'

kafkaConformance('Kafka bus', createKafkaBus)
