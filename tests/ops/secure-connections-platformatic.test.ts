// SASL_SSL and refused credentials or certificates on the @platformatic/kafka Bus adapter (SLUICE_KAFKA_CLIENT=platformatic; kafkajs in
// secure-connections.test.ts). Set before the import: tests/helpers/kafka-bus.ts and every spawned node read it.
process.env.SLUICE_KAFKA_CLIENT = 'platformatic'
await import('./secure-connections.test.ts')
