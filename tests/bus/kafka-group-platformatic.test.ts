// Consumer group membership, leaving and SIGKILL on the @platformatic/kafka Bus adapter (SLUICE_KAFKA_CLIENT=platformatic; kafkajs in
// kafka-group.test.ts). Set before the import: tests/helpers/kafka-bus.ts and every spawned node read it.
process.env.SLUICE_KAFKA_CLIENT = 'platformatic'
await import('./kafka-group.test.ts')
