// Connecting the Kafka Bus, on both clients, to a private broker with only a SASL_SSL listener
// (SCRAM-SHA-512, certificates made here): the right settings publish and read back; a wrong
// password, an unknown CA or no broker at all fail at once with the catalogue's code, naming the
// setting to fix and never the password (bus/kafka-errors.ts classifies what each client throws).
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import pino from 'pino'
import type { KafkaClientName } from '../../bus/kafka-clients.ts'
import type { ConsumedRecord } from '../../bus/types.ts'
import { startKafka, type KafkaCluster } from '../infra/kafka.ts'
import { freePort } from '../infra/ports.ts'
import { removeDir, tempDir } from '../helpers/server.ts'
import { createTestKafkaBus, type TestKafkaBusConfig } from '../helpers/kafka-bus.ts'
import { makeCertificates, type TestCertificates } from './fixtures/kafka-tls.ts'

t.setTimeout(240_000)
const log = pino({ level: 'silent' })
const PASSWORD = 'kafka-Secret-5d1e7'
const WRONG_PASSWORD = 'wrong-Secret-9c2a4'
let dir: string
let certs: TestCertificates
let kafka: KafkaCluster

t.before(async () => {
  dir = await tempDir('sluice-kafka-tls-')
  certs = makeCertificates(dir)
  kafka = await startKafka({
    brokers: 1,
    saslSsl: {
      keyAndCertPem: certs.brokerKeyAndCertPem,
      caPem: certs.caPem,
      users: [
        { name: 'broker', password: 'broker-pass' },
        { name: 'sluice', password: PASSWORD },
      ],
    },
  })
})
t.teardown(async () => {
  await kafka?.stop()
  if (dir) await removeDir(dir)
})

const secure = (overrides: { ca?: string; password?: string } = {}): TestKafkaBusConfig => ({
  brokers: kafka.brokers,
  clientId: 'sluice-connect-test',
  tls: { ca: readFileSync(overrides.ca ?? certs.caPem, 'utf8') },
  sasl: { mechanism: 'scram-sha-512', username: 'sluice', password: overrides.password ?? PASSWORD },
})

/** Opening the bus must fail with `code` and `message` within `ms`, with no password in the error. */
async function refused(
  t: Test,
  client: KafkaClientName,
  config: TestKafkaBusConfig,
  expected: { code: string; message: RegExp },
) {
  const started = Date.now()
  const err = await createTestKafkaBus(config, log, client).then(
    async (bus) => {
      await bus.close()
      return undefined
    },
    (e: Error & { code?: string }) => e,
  )
  t.match(err, expected)
  t.ok(Date.now() - started < 10_000, `failed after ${Date.now() - started} ms`)
  t.notOk(`${err?.message} ${err?.stack}`.includes(PASSWORD), 'no password in the error')
  t.notOk(`${err?.message} ${err?.stack}`.includes(WRONG_PASSWORD), 'no wrong password either')
}

for (const client of ['platformatic', 'kafkajs'] as const) {
  t.test(`${client}: with the CA and the password, records go through SASL_SSL and read back`, async (t) => {
    const bus = await createTestKafkaBus(secure(), log, client)
    t.teardown(() => bus.close())
    const topic = `secure-${randomUUID().slice(0, 8)}`
    await bus.ensureTopics({ [topic]: { partitions: 1 } })
    await bus.publish(topic, [{ key: 'k', value: 'over TLS' }])
    const read: ConsumedRecord[] = []
    await bus.readPartition(topic, 0, async (records) => void read.push(...records))
    t.same(
      read.map((r) => r.value.toString()),
      ['over TLS'],
    )
    t.equal(await bus.reachable(), true)
  })

  t.test(`${client}: a wrong password is CREDENTIALS_REJECTED, naming the settings`, (t) =>
    refused(t, client, secure({ password: WRONG_PASSWORD }), {
      code: 'CREDENTIALS_REJECTED',
      message: /^kafkaUsername \/ kafkaPassword \(SLUICE_KAFKA_USERNAME \/ SLUICE_KAFKA_PASSWORD\): .* as sluice$/,
    }),
  )

  t.test(`${client}: a broker certificate from an unknown CA is CERTIFICATE_UNTRUSTED, naming the setting`, (t) =>
    refused(t, client, secure({ ca: certs.otherCaPem }), {
      code: 'CERTIFICATE_UNTRUSTED',
      message:
        /^kafkaCaFile \(--kafka-ca-file \/ SLUICE_KAFKA_CA_FILE\): the certificate of Kafka at .* is not trusted \(/,
    }),
  )

  t.test(`${client}: no broker listening is LOG_UNAVAILABLE, naming the address`, async (t) => {
    const address = `127.0.0.1:${await freePort()}`
    await refused(
      t,
      client,
      { brokers: [address], clientId: 'sluice-connect-test' },
      {
        code: 'LOG_UNAVAILABLE',
        message: new RegExp(`^cannot reach Kafka at ${address}$`),
      },
    )
  })
}
