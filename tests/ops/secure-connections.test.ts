// The distributed pipeline through a Kafka broker that has only a SASL_SSL listener (SCRAM-SHA-512
// users, certificates made here with openssl) and a ClickHouse over HTTPS (same CA) whose user has
// a password: events in, rows in ClickHouse, functions run, and no secret in any output. A wrong
// password or an unknown CA stops the process at once with an error naming the setting.
// On the default Kafka client (@platformatic/kafka; SLUICE_KAFKA_CLIENT=kafkajs for kafkajs).
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startKafka, type KafkaCluster } from '../infra/kafka.ts'
import { startClickHouse, type ClickHouseServer } from '../infra/clickhouse.ts'
import { tempDir, removeDir, TEST_SIGNING_KEY, eventually, postJson, getJson } from '../helpers/server.ts'
import { kafkaClient } from '../helpers/kafka-bus.ts'
import { spawnSluice, type SluiceProcess } from './sluice-process.ts'

t.setTimeout(300_000)
const dir = await tempDir('sluice-tls-')
const KAFKA_PASSWORD = 'kafka-Secret-7f3a9'
const CLICKHOUSE_PASSWORD = 'clickhouse-Secret-2b8c1'
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })
// A CA, the broker's certificate signed by it (for 127.0.0.1), and a CA nobody signed anything with.
openssl(
  'req',
  '-x509',
  '-newkey',
  'rsa:2048',
  '-nodes',
  '-keyout',
  'ca.key',
  '-out',
  'ca.pem',
  '-days',
  '2',
  '-subj',
  '/CN=sluice-test-ca',
)
openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'broker.key', '-out', 'broker.csr', '-subj', '/CN=localhost')
await writeFile(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
openssl(
  'x509',
  '-req',
  '-in',
  'broker.csr',
  '-CA',
  'ca.pem',
  '-CAkey',
  'ca.key',
  '-CAcreateserial',
  '-out',
  'broker.crt',
  '-days',
  '2',
  '-extfile',
  'san.ext',
)
execFileSync('sh', ['-c', 'cat broker.key broker.crt > broker.pem'], { cwd: dir })
openssl(
  'req',
  '-x509',
  '-newkey',
  'rsa:2048',
  '-nodes',
  '-keyout',
  'other.key',
  '-out',
  'other-ca.pem',
  '-days',
  '2',
  '-subj',
  '/CN=someone-else',
)
await writeFile(join(dir, 'kafka-password'), KAFKA_PASSWORD + '\n')

const [kafka, clickhouse] = (await Promise.all([
  startKafka({
    brokers: 1,
    saslSsl: {
      keyAndCertPem: join(dir, 'broker.pem'),
      caPem: join(dir, 'ca.pem'),
      users: [
        { name: 'broker', password: 'broker-pass' },
        { name: 'sluice', password: KAFKA_PASSWORD },
      ],
    },
  }),
  startClickHouse({
    users: [{ name: 'sluice', password: CLICKHOUSE_PASSWORD }],
    https: { certificateFile: join(dir, 'broker.crt'), privateKeyFile: join(dir, 'broker.key') },
  }),
])) as [KafkaCluster, ClickHouseServer]
const processes: SluiceProcess[] = []
t.teardown(async () => {
  for (const p of processes) p.child.kill('SIGKILL')
  await Promise.all([kafka.stop(), clickhouse.stop()])
  await removeDir(dir)
})

const unique = `secure_${process.pid}`
const env: NodeJS.ProcessEnv = {
  SLUICE_KAFKA_BROKERS: kafka.brokers.join(','),
  SLUICE_KAFKA_CLIENT: kafkaClient,
  SLUICE_KAFKA_CA_FILE: join(dir, 'ca.pem'),
  SLUICE_KAFKA_SASL_MECHANISM: 'scram-sha-512',
  SLUICE_KAFKA_USERNAME: 'sluice',
  SLUICE_KAFKA_PASSWORD_FILE: join(dir, 'kafka-password'),
  SLUICE_CLICKHOUSE_URL: clickhouse.httpsUrl,
  SLUICE_CLICKHOUSE_CA_FILE: join(dir, 'ca.pem'),
  SLUICE_CLICKHOUSE_USER: 'sluice',
  SLUICE_CLICKHOUSE_PASSWORD: CLICKHOUSE_PASSWORD,
  SLUICE_CLICKHOUSE_DATABASE: unique,
  SLUICE_TOPIC_PREFIX: unique,
  SLUICE_SIGNING_KEY: TEST_SIGNING_KEY,
  SLUICE_PARTITIONS: '2',
}
const functionsFile = fileURLToPath(new URL('../distributed/functions.ts', import.meta.url))
const auth = { authorization: `Bearer ${TEST_SIGNING_KEY}` }

async function start(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<SluiceProcess> {
  const dataDir = await tempDir('sluice-node-')
  const p = spawnSluice([...args, '--port', '0', '--ops-port', '0', '--data-dir', dataDir], { ...env, ...extra })
  processes.push(p)
  void p.exited.then(() => removeDir(dataDir))
  return p
}

t.test(
  'ingest → ClickHouse and function runs, through SASL_SSL and ClickHouse over HTTPS with a password',
  async (t) => {
    const node = await start(['start', '--role', 'all', '--functions', functionsFile])
    const url = await node.up(120_000)
    t.same((await getJson(`${url}/readyz`)).body, { status: 'ready' }, 'ready: Kafka and ClickHouse answer')
    const created = await fetch(`${url}/v1/keys`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"env":"production"}',
    })
    const key = (await created.json()).data.key as string
    await eventually(
      async () => ((await getJson(`${url}/v1/functions`, auth)).body.data.length === 2 ? true : undefined),
      60_000,
      250,
    )
    const events = Array.from({ length: 10 }, (_, i) => ({
      name: 'e2e/order.placed',
      data: { orderId: `o-${i}` },
      id: `o-${i}`,
    }))
    const sent = await postJson(`${url}/e/${key}`, events)
    t.equal(sent.status, 200)
    const stored = await eventually(
      async () => {
        const r = await getJson(`${url}/v1/events?name=e2e/order.placed&limit=100`, auth)
        return r.body.data.length === 10 ? r.body.data : undefined
      },
      90_000,
      500,
    )
    t.same(
      new Set(stored.map((e: { internal_id: string }) => e.internal_id)),
      new Set(sent.body.ids),
      'every accepted event is a row',
    )
    const runs = await eventually(
      async () => {
        const r = await getJson(`${url}/v1/runs?status=completed&limit=100`, auth)
        return r.body.data.length === 20 ? r.body.data : undefined
      },
      90_000,
      500,
    )
    t.equal(runs.length, 20, 'two functions ran for each of the 10 events')
    // Readiness follows the broker: 503 while it is frozen, 200 again once it runs, no restart.
    const [brokerPid] = kafka.pids()
    process.kill(-brokerPid, 'SIGSTOP')
    const frozen = await eventually(
      async () => {
        const r = await getJson(`${url}/readyz`)
        return r.status === 503 ? r.body : undefined
      },
      30_000,
      250,
    ).finally(() => process.kill(-brokerPid, 'SIGCONT'))
    t.match(frozen, { status: 'not_ready', reasons: { kafka: String } }, `frozen broker: ${JSON.stringify(frozen)}`)
    await eventually(async () => ((await getJson(`${url}/readyz`)).status === 200 ? true : undefined), 60_000, 250)
    t.equal((await getJson(`${url}/healthz`)).status, 200, 'alive throughout')
    node.child.kill('SIGTERM')
    t.equal((await node.exited).code, 0, 'a clean shutdown')
    for (const secret of [KAFKA_PASSWORD, CLICKHOUSE_PASSWORD, TEST_SIGNING_KEY, key]) {
      t.notOk(node.output().includes(secret), 'no secret in the log')
    }
  },
)

// Each refusal: exit status 1 within seconds (no retry loop), the setting named, the secret not shown.
const refusals: Array<[string, string[], NodeJS.ProcessEnv, RegExp]> = [
  [
    'a wrong Kafka password',
    ['--role', 'router'],
    { SLUICE_KAFKA_PASSWORD_FILE: '', SLUICE_KAFKA_PASSWORD: 'wrong-kafka-pass' },
    /CREDENTIALS_REJECTED: kafkaUsername \/ kafkaPassword \(SLUICE_KAFKA_USERNAME \/ SLUICE_KAFKA_PASSWORD\)/,
  ],
  [
    'a broker certificate from an unknown CA',
    ['--role', 'router'],
    { SLUICE_KAFKA_CA_FILE: join(dir, 'other-ca.pem') },
    /CERTIFICATE_UNTRUSTED: kafkaCaFile \(--kafka-ca-file \/ SLUICE_KAFKA_CA_FILE\)/,
  ],
  [
    'a wrong ClickHouse password',
    ['--role', 'api'],
    { SLUICE_CLICKHOUSE_PASSWORD: 'wrong-clickhouse-pass' },
    /CREDENTIALS_REJECTED: clickhouseUser \/ clickhousePassword \(SLUICE_CLICKHOUSE_USER \/ SLUICE_CLICKHOUSE_PASSWORD\)/,
  ],
  [
    'a ClickHouse certificate from an unknown CA',
    ['--role', 'api'],
    { SLUICE_CLICKHOUSE_CA_FILE: join(dir, 'other-ca.pem') },
    /CERTIFICATE_UNTRUSTED: clickhouseCaFile \(--clickhouse-ca-file \/ SLUICE_CLICKHOUSE_CA_FILE\)/,
  ],
]
for (const [what, args, extra, expected] of refusals) {
  t.test(`${what} stops the process at once, naming the setting`, async (t) => {
    const p = await start(['start', ...args], extra)
    const { code, ms } = await p.exited
    t.equal(code, 1, 'exit status 1')
    t.match(p.output(), expected)
    t.ok(ms < 15_000, `exited after ${ms} ms`)
    for (const secret of [KAFKA_PASSWORD, CLICKHOUSE_PASSWORD, 'wrong-kafka-pass', 'wrong-clickhouse-pass']) {
      t.notOk(p.output().includes(secret), 'no password in the output')
    }
  })
}
