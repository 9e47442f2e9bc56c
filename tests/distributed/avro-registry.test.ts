// Distributed mode with a real schema registry (the shared Apicurio, compatibility BACKWARD): the
// schemas are registered at start, events go through ingest, dedup and the sink as Confluent
// wire-format records that a plain consumer decodes with the schema it fetches by id, and a start
// whose schema a subject refuses stops the process with SCHEMA_INCOMPATIBLE naming the subject.
import t from 'tap'
import avsc from 'avsc'
import { Kafka, logLevel } from 'kafkajs'
import { eventually, getJson, postJson, removeDir, tempDir } from '../helpers/server.ts'
import { testRegistryUrl } from '../infra/services.ts'
import { spawnSluice } from '../ops/sluice-process.ts'
import { auth, distributedEnv, startNode } from './cluster.ts'

t.setTimeout(240_000)
const registryUrl = testRegistryUrl()

async function registry<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(`${registryUrl}${path}`, {
    ...init,
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
  })
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as T
}

/** The first record of `topic`, read from the beginning with a group of its own. */
async function firstRecord(brokers: string[], topic: string): Promise<Buffer> {
  const consumer = new Kafka({ clientId: 'avro-registry-test', brokers, logLevel: logLevel.NOTHING }).consumer({
    groupId: `${topic}-reader`,
  })
  await consumer.connect()
  try {
    await consumer.subscribe({ topic, fromBeginning: true })
    return await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no record on ${topic} within 60 s`)), 60_000)
      consumer
        .run({
          eachMessage: async ({ message }) => {
            clearTimeout(timer)
            resolve(message.value!)
          },
        })
        .catch(reject)
    })
  } finally {
    await consumer.disconnect()
  }
}

t.test('every stage reads and writes the Confluent wire format with the registered schemas', async (t) => {
  const env: NodeJS.ProcessEnv = { ...distributedEnv('avroreg'), SLUICE_SCHEMA_REGISTRY_URL: registryUrl }
  const topics = env.SLUICE_TOPIC_PREFIX!
  const node = await startNode(['all'], env, [], 'start', { startTimeoutMs: 90_000 })
  t.teardown(() => node.kill())
  for (const topic of ['raw', 'raw-slow', 'incoming', 'events', 'duplicates'])
    t.same(await registry(`/subjects/${topics}.${topic}-value/versions`), [1], `${topic}: registered at start`)

  const key = (await postJson(`${node.url}/v1/keys`, { env: 'production' }, auth)).body.data.key
  const event = { name: 'avro/order.placed', data: { orderId: 'o-1', total: 12.5 }, id: 'o-1' }
  // The ingest role learns the new key from the control topic.
  const accepted: string = await eventually(
    async () => {
      const r = await postJson(`${node.url}/e/${key}`, event)
      return r.status === 200 ? r.body.ids[0] : undefined
    },
    30_000,
    100,
  )
  const stored = await eventually(
    async () => {
      const r = await getJson(`${node.url}/v1/events?name=${event.name}`, auth)
      return r.body.data?.length === 1 ? r.body.data[0] : undefined
    },
    90_000,
    250,
  )
  t.equal(stored.internal_id, accepted)
  t.same(stored.data, event.data, 'ingest → incoming → dedup → events → sink: decoded at every hop')

  const record = await firstRecord(env.SLUICE_KAFKA_BROKERS!.split(','), `${topics}.events`)
  t.equal(record[0], 0, 'magic byte 0')
  const id = record.readUInt32BE(1)
  const latest = await registry<{ id: number }>(`/subjects/${topics}.events-value/versions/latest`)
  t.equal(id, latest.id, "the record carries the subject's schema id")
  // What Kafka Connect or a Java consumer does: the writer schema by id, then any Avro decoder.
  const { schema } = await registry<{ schema: string }>(`/schemas/ids/${id}`)
  const plain = avsc.Type.forSchema(JSON.parse(schema), { wrapUnions: 'auto' }).fromBuffer(record.subarray(5)) as {
    internalId: string
    name: string
    data: string
  }
  t.equal(plain.internalId, accepted)
  t.equal(plain.name, event.name)
  t.same(JSON.parse(plain.data), event.data)
})

t.test("a start whose schema a subject's registered versions refuse exits with SCHEMA_INCOMPATIBLE", async (t) => {
  const env: NodeJS.ProcessEnv = { ...distributedEnv('avroref'), SLUICE_SCHEMA_REGISTRY_URL: registryUrl }
  // Another writer holds the subject with a schema ours cannot read its records with (no defaults).
  const subject = `${env.SLUICE_TOPIC_PREFIX}.events-value`
  const theirs = {
    type: 'record',
    name: 'Event',
    namespace: 'dev.sluice',
    fields: [{ name: 'internalId', type: 'string' }],
  }
  await registry(`/subjects/${subject}/versions`, {
    method: 'POST',
    body: JSON.stringify({ schema: JSON.stringify(theirs) }),
  })
  const dir = await tempDir('sluice-avro-refused-')
  t.teardown(() => removeDir(dir))
  const node = spawnSluice(['start', '--role', 'router', '--port', '0', '--ops-port', '0', '--data-dir', dir], env)
  const { code } = await node.exited
  t.equal(code, 1, 'exit status 1')
  t.match(
    node.output(),
    new RegExp(
      `sluice: SCHEMA_INCOMPATIBLE: registering the schema of subject "${subject}": the schema registry at \\S+ answered 409`,
    ),
  )
  t.same(await registry(`/subjects/${subject}/versions`), [1], 'nothing was registered over theirs')
})
