// The distributed pipeline end to end (ClickHouse 18.16) on the kafkajs client: the one pipeline
// run on both clients, beside the Bus suite (bus/ARCHITECTURE.md, "Tests"); @platformatic/kafka,
// the default, in e2e.test.ts. Set before the import: tests/helpers/kafka-bus.ts reads it, for the
// buses the test opens and every node it spawns.
process.env.SLUICE_KAFKA_CLIENT = 'kafkajs'
await import('./e2e.test.ts')
