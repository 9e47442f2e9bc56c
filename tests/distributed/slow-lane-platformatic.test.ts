// slow-lane.test.ts on the @platformatic/kafka Bus adapter (SLUICE_KAFKA_CLIENT=platformatic).
// Set before the import: every spawned node reads it.
process.env.SLUICE_KAFKA_CLIENT = 'platformatic'
await import('./slow-lane.test.ts')
