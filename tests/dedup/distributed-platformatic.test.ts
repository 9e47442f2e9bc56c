// Dedup failover between two instances of one group on the @platformatic/kafka Bus adapter (SLUICE_KAFKA_CLIENT=platformatic; kafkajs in
// distributed.test.ts). Set before the import: tests/helpers/kafka-bus.ts and every spawned node read it.
process.env.SLUICE_KAFKA_CLIENT = 'platformatic'
await import('./distributed.test.ts')
