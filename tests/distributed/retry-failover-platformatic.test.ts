// A killed runner's parked retry is not lost on the @platformatic/kafka Bus adapter (SLUICE_KAFKA_CLIENT=platformatic; kafkajs in
// retry-failover.test.ts). Set before the import: tests/helpers/kafka-bus.ts and every spawned node read it.
process.env.SLUICE_KAFKA_CLIENT = 'platformatic'
await import('./retry-failover.test.ts')
