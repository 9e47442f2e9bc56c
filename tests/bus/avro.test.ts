// Avro codecs: round trips, the schemas documented in docs/avro.md are the ones used, a plain
// Avro decoder given only the documented schema reads what Sluice wrote, and with a schema
// registry (a FAKE one here: tests/helpers/fake-schema-registry.ts says why) the records are in
// the Confluent wire format and resolve a record written with another schema version.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import avsc from 'avsc'
import pino from 'pino'
import { createAvroCodecs, singleObjectFingerprint } from '../../bus/avro.ts'
import { eventSchema, rawRequestSchema } from '../../bus/avro-schemas.ts'
import { topicNames } from '../../bus/topics.ts'
import { jsonCodec } from '../../bus/codec.ts'
import type { StoredEvent } from '../../core/event.ts'
import { encodeRawBody, rawBodyBytes, type RawWebhookRequest } from '../../core/raw-request.ts'
import { startFakeSchemaRegistry } from '../helpers/fake-schema-registry.ts'
import { ROOT, eventually } from '../helpers/server.ts'

const log = pino({ level: 'silent' })
const topics = topicNames('avro-test')

const events: StoredEvent[] = [
  {
    internalId: '01J0000000000000000000000A',
    id: 'order-1',
    name: 'shop/order.placed',
    data: { total: 12.5, items: [{ sku: 'a', qty: 2 }], note: 'žluťoučký 🐴', nested: { deep: [null, true] } },
    ts: 1_700_000_000_000,
    env: 'production',
    receivedAt: 1_700_000_000_123,
    source: { kind: 'api', keyId: 'key_1' },
  },
  {
    internalId: '01J0000000000000000000000B',
    id: '01J0000000000000000000000B',
    name: 'github/push',
    data: {},
    ts: 1,
    env: 'feature-x',
    receivedAt: 2,
    source: { kind: 'webhook', webhookId: 'wh_x', requestId: '01J00000000000000000000REQ' },
  },
  {
    internalId: '01J0000000000000000000000C',
    id: 'fn-1',
    name: 'app/step.sent',
    data: { n: 1 },
    ts: 3,
    env: 'staging',
    receivedAt: 4,
    source: { kind: 'function', functionId: 'app-fn', runId: 'run-1', stepId: 'send' },
    duplicateOf: '01J0000000000000000000000A',
  },
  {
    internalId: '01J0000000000000000000000D',
    id: 'x',
    name: 'y',
    data: { a: 1 },
    ts: 5,
    env: 'production',
    receivedAt: 6,
    source: { kind: 'api' },
  },
]
const requests: RawWebhookRequest[] = [
  {
    requestId: 'R1',
    webhookId: 'wh_1',
    attempt: 1,
    receivedAt: 7,
    ip: '203.0.113.9',
    headers: { 'Content-Type': 'application/json', 'X-Github-Event': 'push' },
    query: { a: ['1', '2'], empty: [] },
    ...encodeRawBody(Buffer.from('{"hello":"wörld"}')),
  },
  {
    requestId: 'R2',
    webhookId: 'wh_2',
    attempt: 3,
    receivedAt: 8,
    ip: '::1',
    headers: {},
    query: {},
    ...encodeRawBody(Buffer.from([0xff, 0xfe, 0x00, 0x41])),
  },
]

/** The schemas as docs/avro.md shows them, under `<!-- avro-schema: Name -->`. */
function documentedSchema(name: string): object {
  const doc = readFileSync(join(ROOT, 'docs/avro.md'), 'utf8')
  const match = new RegExp(`<!-- avro-schema: ${name} -->\\s*\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(doc)
  if (!match) throw new Error(`docs/avro.md shows no schema ${name}`)
  return JSON.parse(match[1])
}

t.test('docs/avro.md documents exactly the schemas the codecs use', async (t) => {
  t.same(documentedSchema('Event'), eventSchema)
  t.same(documentedSchema('RawWebhookRequest'), rawRequestSchema)
})

t.test('without a registry: every kind of event and raw request round-trips, in single-object encoding', async (t) => {
  const codecs = await createAvroCodecs({ topics }, log)
  for (const event of events)
    t.same(codecs.stored.decode(codecs.stored.encode(event)), event, `${event.source.kind} event`)
  for (const request of requests) {
    const decoded = codecs.raw.decode(codecs.raw.encode(request))
    t.same(decoded, request, `raw request with a ${request.bodyEncoding} body`)
    t.ok(rawBodyBytes(decoded).equals(rawBodyBytes(request)), 'the body bytes are exact')
  }
  const bytes = codecs.stored.encode(events[0])
  t.same([...bytes.subarray(0, 2)], [0xc3, 0x01], 'single-object marker')
  t.ok(bytes.length < Buffer.byteLength(JSON.stringify(events[0])), `smaller than JSON (${bytes.length} bytes)`)
})

t.test('a plain avsc decoder given only the documented schema decodes what the codec wrote', async (t) => {
  const codecs = await createAvroCodecs({ topics }, log)
  const eventType = avsc.Type.forSchema(documentedSchema('Event') as avsc.Schema, { wrapUnions: 'auto' })
  const bytes = codecs.stored.encode(events[2])
  t.ok(
    bytes.subarray(2, 10).equals(singleObjectFingerprint(eventType)),
    "the header carries the documented schema's CRC-64-AVRO fingerprint",
  )
  const plain = eventType.fromBuffer(bytes.subarray(10)) as Record<string, unknown>
  t.equal(plain.internalId, events[2].internalId)
  t.same(JSON.parse(plain.data as string), events[2].data, 'data is the payload as JSON text')
  t.same(
    JSON.parse(JSON.stringify(plain.source)),
    { 'dev.sluice.FunctionSource': { functionId: 'app-fn', runId: 'run-1', stepId: 'send' } },
    'source is a union branch per kind',
  )
  t.equal(plain.duplicateOf, events[2].duplicateOf)
  const rawType = avsc.Type.forSchema(documentedSchema('RawWebhookRequest') as avsc.Schema)
  const raw = rawType.fromBuffer(codecs.raw.encode(requests[1]).subarray(10)) as { body: Buffer; query: object }
  t.ok(raw.body.equals(Buffer.from([0xff, 0xfe, 0x00, 0x41])), 'body is the exact bytes')
})

t.test('records written as JSON (before Avro was turned on) are still read', async (t) => {
  const codecs = await createAvroCodecs({ topics }, log)
  t.same(codecs.stored.decode(Buffer.from(jsonCodec<StoredEvent>().encode(events[0]))), events[0])
})

t.test(
  'with a schema registry (FAKE, in-process): schemas registered per topic, Confluent wire format, readable by id',
  async (t) => {
    const registry = await startFakeSchemaRegistry()
    t.teardown(() => registry.close())
    const codecs = await createAvroCodecs({ topics, schemaRegistryUrl: registry.url }, log)
    const subjects = (await (await fetch(`${registry.url}/subjects`)).json()) as string[]
    t.same(
      subjects.sort(),
      [
        `${topics.duplicates}-value`,
        `${topics.events}-value`,
        `${topics.incoming}-value`,
        `${topics.raw}-value`,
        `${topics.rawSlow}-value`,
      ].sort(),
      'one subject per topic, TopicNameStrategy',
    )

    const bytes = codecs.stored.encode(events[0])
    t.equal(bytes[0], 0, 'magic byte 0')
    const id = bytes.readUInt32BE(1)
    const latest = (await (await fetch(`${registry.url}/subjects/${topics.events}-value/versions/latest`)).json()) as {
      id: number
    }
    t.equal(id, latest.id, 'the 4-byte id is the registered schema id')
    t.same(codecs.stored.decode(bytes), events[0], 'round trip')
    t.same(codecs.raw.decode(codecs.raw.encode(requests[0])), requests[0], 'raw requests too')

    // What another consumer does: fetch the writer schema by id, decode the rest with plain avsc.
    const { schema } = (await (await fetch(`${registry.url}/schemas/ids/${id}`)).json()) as { schema: string }
    t.same(JSON.parse(schema), eventSchema, 'the registry holds the full documented schema')
    const plain = avsc.Type.forSchema(JSON.parse(schema), { wrapUnions: 'auto' }).fromBuffer(bytes.subarray(5)) as {
      name: string
      data: string
    }
    t.equal(plain.name, events[0].name)
    t.same(JSON.parse(plain.data), events[0].data)

    const reopened = await createAvroCodecs({ topics, schemaRegistryUrl: registry.url }, log)
    t.equal(
      reopened.stored.encode(events[1]).readUInt32BE(1),
      id,
      'another node registering the same schema gets the same id',
    )
    t.same(reopened.stored.decode(codecs.stored.encode(events[1])), events[1])
  },
)

t.test(
  'with a registry: a record written with a newer schema version resolves once its schema is fetched',
  async (t) => {
    const registry = await startFakeSchemaRegistry()
    t.teardown(() => registry.close())
    const codecs = await createAvroCodecs({ topics, schemaRegistryUrl: registry.url }, log)
    // A later Sluice adds a field (with a default, as docs/avro.md requires) and registers it.
    const newer = {
      ...eventSchema,
      fields: [...eventSchema.fields, { name: 'traceId', type: ['null', 'string'], default: null }],
    }
    const response = await fetch(`${registry.url}/subjects/${topics.events}-value/versions`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schema: JSON.stringify(newer) }),
    })
    const { id: newerId } = (await response.json()) as { id: number }
    const newerType = avsc.Type.forSchema(newer as avsc.Schema, { wrapUnions: 'auto' })
    const prefix = Buffer.alloc(5)
    prefix.writeUInt32BE(newerId, 1)
    const written = Buffer.concat([
      prefix,
      newerType.toBuffer({
        internalId: 'N1',
        id: 'n',
        name: 'later',
        data: '{"v":2}',
        ts: 1,
        env: 'production',
        receivedAt: 2,
        source: { 'dev.sluice.ApiSource': { keyId: null } },
        duplicateOf: null,
        traceId: 'abc',
      }),
    ])
    t.throws(
      () => codecs.stored.decode(written),
      /not loaded yet/,
      'the first decode starts fetching the writer schema (the bus redelivers)',
    )
    const decoded = await eventually(async () => {
      try {
        return codecs.stored.decode(written)
      } catch {
        return undefined
      }
    }, 5_000)
    t.same(
      decoded,
      {
        internalId: 'N1',
        id: 'n',
        name: 'later',
        data: { v: 2 },
        ts: 1,
        env: 'production',
        receivedAt: 2,
        source: { kind: 'api' },
      },
      'resolved against our schema; the unknown field is dropped',
    )
    t.ok(registry.requests.includes(`GET /schemas/ids/${newerId}`), 'fetched by id')
  },
)
