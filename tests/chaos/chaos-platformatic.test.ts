// The short chaos run (3 brokers, every role and a broker killed) on the @platformatic/kafka Bus
// adapter (SLUICE_KAFKA_CLIENT=platformatic; kafkajs in chaos.test.ts). Set before the import:
// every spawned node reads it.
process.env.SLUICE_KAFKA_CLIENT = 'platformatic'
await import('./chaos.test.ts')
