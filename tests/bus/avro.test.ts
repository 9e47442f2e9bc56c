// Avro codecs: round trips, the schemas documented in docs/avro.md are the ones used, a plain
// Avro decoder given only the documented schema reads what Sluice wrote, and with a real schema
// registry (Apicurio's Confluent-compatible API, from tests/infra/up.ts, compatibility BACKWARD as
// Confluent's default) the schemas are registered at start, the records are in the Confluent wire
// format, a record written with another schema version resolves, a compatible evolution is
// registered and an incompatible one refused.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import avsc from 'avsc'
import pino from 'pino'
import { avroCodec, createAvroCodecs, singleObjectFingerprint } from '../../bus/avro.ts'
import { eventFromAvro, eventSchema, eventToAvro, rawRequestSchema } from '../../bus/avro-schemas.ts'
import { schemaRegistryClient } from '../../bus/schema-registry.ts'
import { topicNames } from '../../bus/topics.ts'
import { jsonCodec } from '../../bus/codec.ts'
import type { StoredEvent } from '../../core/event.ts'
import { encodeRawBody, rawBodyBytes, type RawWebhookRequest } from '../../core/raw-request.ts'
import { ROOT, eventually } from '../helpers/server.ts'
import { freePort } from '../infra/ports.ts'
import { testRegistryUrl } from '../infra/services.ts'

const log = pino({ level: 'silent' })
const topics = topicNames('avro-test')
const registryUrl = testRegistryUrl()
/** Topics (so subjects) of their own on the shared registry, which forgets nothing until it stops. */
const freshTopics = (name: string) => topicNames(`avro-${name}-${process.pid}-${Date.now().toString(36)}`)
const storedSubjects = (names: typeof topics) =>
  [names.incoming, names.events, names.duplicates].map((t) => `${t}-value`)

async function registryGet<T>(path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${registryUrl}${path}`)
  return { status: response.status, body: (await response.json()) as T }
}

async function registerRaw(subject: string, schema: object): Promise<number> {
  const response = await fetch(`${registryUrl}/subjects/${subject}/versions`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ schemaType: 'AVRO', schema: JSON.stringify(schema) }),
  })
  if (!response.ok) throw new Error(`registering ${subject}: ${response.status} ${await response.text()}`)
  return ((await response.json()) as { id: number }).id
}

/** The event schema with one more field, as a later Sluice might have it. */
const withField = (field: object) => ({ ...eventSchema, fields: [...eventSchema.fields, field] })

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

t.test('with a registry: the schemas are registered on first start, one subject per topic', async (t) => {
  const fresh = freshTopics('first')
  const subjects = [...storedSubjects(fresh), `${fresh.raw}-value`, `${fresh.rawSlow}-value`]
  for (const subject of subjects)
    t.equal((await registryGet(`/subjects/${subject}/versions`)).status, 404, `${subject}: nothing before`)
  const codecs = await createAvroCodecs({ topics: fresh, schemaRegistryUrl: registryUrl }, log)
  for (const subject of subjects)
    t.same((await registryGet(`/subjects/${subject}/versions`)).body, [1], `${subject}: version 1 registered`)

  const bytes = codecs.stored.encode(events[0])
  t.equal(bytes[0], 0, 'magic byte 0')
  const id = bytes.readUInt32BE(1)
  const latest = await registryGet<{ id: number }>(`/subjects/${fresh.events}-value/versions/latest`)
  t.equal(id, latest.body.id, 'the 4-byte id is the registered schema id')
  t.same(codecs.stored.decode(bytes), events[0], 'round trip')
  t.same(codecs.raw.decode(codecs.raw.encode(requests[0])), requests[0], 'raw requests too')

  // What another consumer does: fetch the writer schema by id, decode the rest with plain avsc.
  const { body } = await registryGet<{ schema: string }>(`/schemas/ids/${id}`)
  t.same(JSON.parse(body.schema), eventSchema, 'the registry holds the full documented schema')
  const plain = avsc.Type.forSchema(JSON.parse(body.schema), { wrapUnions: 'auto' }).fromBuffer(bytes.subarray(5)) as {
    name: string
    data: string
  }
  t.equal(plain.name, events[0].name)
  t.same(JSON.parse(plain.data), events[0].data)

  const restarted = await createAvroCodecs({ topics: fresh, schemaRegistryUrl: registryUrl }, log)
  t.equal(restarted.stored.encode(events[1]).readUInt32BE(1), id, 'a restart (or another node) gets the same id')
  t.same((await registryGet(`/subjects/${fresh.events}-value/versions`)).body, [1], 'and adds no version')
  t.same(restarted.stored.decode(codecs.stored.encode(events[1])), events[1])
})

t.test(
  'with a registry: a compatible evolution (a new field with a default) is registered; old records still decode',
  async (t) => {
    const fresh = freshTopics('evolve')
    const registry = schemaRegistryClient({ url: registryUrl })
    const current = await createAvroCodecs({ topics: fresh, schemaRegistryUrl: registryUrl }, log)
    const old = current.stored.encode(events[2])

    const evolved = withField({ name: 'traceId', type: ['null', 'string'], default: null })
    const later = await avroCodec(evolved, eventToAvro, eventFromAvro, registry, [fresh.incoming, fresh.events], log)
    t.same((await registryGet(`/subjects/${fresh.events}-value/versions`)).body, [1, 2], 'version 2 registered')
    const newer = later.encode(events[0])
    t.not(newer.readUInt32BE(1), old.readUInt32BE(1), 'under a new id')

    // The later codec reads a record of the earlier schema: fetched by id, resolved, the default filled in.
    t.throws(() => later.decode(old), /not loaded yet/, 'the first decode starts fetching the writer schema')
    const decodeWhenLoaded = (codec: typeof later, bytes: Buffer) =>
      eventually(async () => {
        try {
          return codec.decode(bytes)
        } catch {
          return undefined
        }
      }, 10_000)
    t.same(await decodeWhenLoaded(later, old), events[2], 'an old record decodes with the new schema')
    t.same(await decodeWhenLoaded(current.stored, newer), events[0], 'and a new record with the old schema')
  },
)

t.test(
  'with a registry: a record written with a newer schema version resolves once its schema is fetched',
  async (t) => {
    const fresh = freshTopics('newer')
    const codecs = await createAvroCodecs({ topics: fresh, schemaRegistryUrl: registryUrl }, log)
    // A later Sluice adds a field (with a default, as docs/avro.md requires) and registers it.
    const newer = withField({ name: 'traceId', type: ['null', 'string'], default: null })
    const newerId = await registerRaw(`${fresh.events}-value`, newer)
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
    }, 10_000)
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
  },
)

t.test('with a registry: an incompatible schema is refused with SCHEMA_INCOMPATIBLE naming the subject', async (t) => {
  const fresh = freshTopics('refuse')
  const registry = schemaRegistryClient({ url: registryUrl })
  await createAvroCodecs({ topics: fresh, schemaRegistryUrl: registryUrl }, log)
  const incompatible: Array<[string, object]> = [
    ['a new field without a default', withField({ name: 'tenant', type: 'string' })],
    [
      'a field whose type changed',
      { ...eventSchema, fields: eventSchema.fields.map((f) => (f.name === 'name' ? { ...f, type: 'long' } : f)) },
    ],
  ]
  for (const [what, schema] of incompatible) {
    const err = await avroCodec(schema, eventToAvro, eventFromAvro, registry, [fresh.events], log).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    )
    t.equal(err?.code, 'SCHEMA_INCOMPATIBLE', what)
    t.match(
      err?.message,
      new RegExp(`subject "${fresh.events}-value": the schema registry at ${registryUrl} answered 409: .*Incompatible`),
      'the message names the subject, the registry and its answer',
    )
  }
  t.same((await registryGet(`/subjects/${fresh.events}-value/versions`)).body, [1], 'nothing was registered')
})

t.test(
  "with a registry: a start whose schema the subject's versions refuse fails with SCHEMA_INCOMPATIBLE",
  async (t) => {
    // Another writer got there first with a schema ours cannot read: our `id` field has no default.
    const fresh = freshTopics('taken')
    const theirs = {
      type: 'record',
      name: 'Event',
      namespace: 'dev.sluice',
      fields: [{ name: 'internalId', type: 'string' }],
    }
    await registerRaw(`${fresh.events}-value`, theirs)
    await t.rejects(createAvroCodecs({ topics: fresh, schemaRegistryUrl: registryUrl }, log), {
      code: 'SCHEMA_INCOMPATIBLE',
      message: new RegExp(`subject "${fresh.events}-value"`),
    })
  },
)

t.test('with a registry that cannot be reached: SCHEMA_REGISTRY_UNAVAILABLE naming the setting', async (t) => {
  // A port that was free a moment ago: nothing listens there.
  const url = `http://127.0.0.1:${await freePort()}`
  await t.rejects(createAvroCodecs({ topics: freshTopics('unreachable'), schemaRegistryUrl: url }, log), {
    code: 'SCHEMA_REGISTRY_UNAVAILABLE',
    message: /^schemaRegistryUrl \(--schema-registry-url \/ SLUICE_SCHEMA_REGISTRY_URL\): .*ECONNREFUSED/,
  })
})

t.test('a registry URL without http(s):// is CONFIG_INVALID naming the setting, not the value', async (t) => {
  const err = await createAvroCodecs({ topics, schemaRegistryUrl: 'registry.internal:8081' }, log).then(
    () => undefined,
    (e: Error & { code?: string }) => e,
  )
  t.equal(err?.code, 'CONFIG_INVALID')
  t.equal(
    err?.message,
    'schemaRegistryUrl (--schema-registry-url / SLUICE_SCHEMA_REGISTRY_URL): not an http:// or https:// URL',
  )
})

t.test('a URL that is not the Confluent-compatible API is CONFIG_INVALID naming the setting', async (t) => {
  // A path under the API that is not one of its routes: the registry answers 404.
  const url = `${registryUrl}/not-the-api`
  await t.rejects(createAvroCodecs({ topics: freshTopics('wrong-path'), schemaRegistryUrl: url }, log), {
    code: 'CONFIG_INVALID',
    message: /^schemaRegistryUrl \(--schema-registry-url \/ SLUICE_SCHEMA_REGISTRY_URL\): .* answered 404/,
  })
})
