// Ingest with the broker down, on the @platformatic/kafka Bus adapter (SLUICE_KAFKA_CLIENT=platformatic;
// kafkajs in broker-down.test.ts). Set before the import: every spawned node reads it.
process.env.SLUICE_KAFKA_CLIENT = 'platformatic'
await import('./broker-down.test.ts')
