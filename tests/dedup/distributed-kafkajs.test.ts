// Dedup failover between two instances of one group on the kafkajs Bus adapter
// (SLUICE_KAFKA_CLIENT=kafkajs; @platformatic/kafka, the default, in distributed.test.ts). Set
// before the import: tests/helpers/kafka-bus.ts reads it, for the buses the test opens and every
// node it spawns.
process.env.SLUICE_KAFKA_CLIENT = 'kafkajs'
await import('./distributed.test.ts')
