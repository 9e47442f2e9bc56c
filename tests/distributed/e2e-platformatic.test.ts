// The distributed pipeline end to end on the @platformatic/kafka Bus adapter (SLUICE_KAFKA_CLIENT=platformatic; kafkajs in
// e2e.test.ts). Set before the import: tests/helpers/kafka-bus.ts and every spawned node read it.
process.env.SLUICE_KAFKA_CLIENT = 'platformatic'
await import('./e2e.test.ts')
