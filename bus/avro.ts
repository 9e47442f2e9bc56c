// Avro codecs for the records on `incoming`, `events`, `duplicates` and `raw` (schemas:
// avro-schemas.ts, docs/avro.md). Two wire formats, both readable by any Avro library:
// - without a schema registry, Avro single-object encoding (spec: 0xC3 0x01, the schema's 8-byte
//   CRC-64-AVRO fingerprint, little-endian, then the Avro binary), so a record names its schema;
// - with SLUICE_SCHEMA_REGISTRY_URL, the schemas are registered (subject `<topic>-value`,
//   TopicNameStrategy; bus/schema-registry.ts) and records use the Confluent wire
//   format (0x00, the 4-byte big-endian schema id, the Avro binary), what Confluent's
//   KafkaAvroDeserializer and other registry-aware consumers expect.
// Decoding tells the formats apart by their first byte, and also reads JSON ('{'), so topics
// written before Avro was turned on (or before the registry was) stay readable.
//
// Codec.decode is synchronous. A record written with another registered schema (a newer or older
// Sluice) is resolved against ours once its schema is fetched: the first such record starts the
// fetch and throws, the bus redelivers the batch (retry with backoff), and it decodes from then on.
import avsc from 'avsc'
import type { Logger } from 'pino'
import type { EventRecord, StoredEvent } from '../core/event.ts'
import type { RawWebhookRequest } from '../core/raw-request.ts'
import type { Codec } from './codec.ts'
import type { TopicNames } from './topics.ts'
import { schemaRegistryClient, type SchemaRegistry } from './schema-registry.ts'
import {
  eventFromAvro,
  eventSchema,
  eventToAvro,
  rawRequestFromAvro,
  rawRequestSchema,
  rawRequestToAvro,
} from './avro-schemas.ts'

export interface AvroCodecConfig {
  /** Register schemas there and write the Confluent wire format; absent: single-object encoding. */
  schemaRegistryUrl?: string
  /** HTTP basic auth to the registry (Confluent Cloud: API key and secret). */
  schemaRegistryAuth?: { username: string; password: string }
  topics: Pick<TopicNames, 'incoming' | 'events' | 'duplicates' | 'raw' | 'rawSlow'>
}

export interface AvroCodecs {
  event: Codec<EventRecord, Buffer>
  stored: Codec<StoredEvent, Buffer>
  raw: Codec<RawWebhookRequest, Buffer>
}

const MAGIC_CONFLUENT = 0x00
const MAGIC_SINGLE_OBJECT = [0xc3, 0x01]
const JSON_OBJECT = 0x7b // '{'

export async function createAvroCodecs(config: AvroCodecConfig, log: Logger): Promise<AvroCodecs> {
  const { topics } = config
  const registry = config.schemaRegistryUrl
    ? schemaRegistryClient({ url: config.schemaRegistryUrl, auth: config.schemaRegistryAuth })
    : undefined
  const storedTopics = [topics.incoming, topics.events, topics.duplicates]
  const stored = await avroCodec<StoredEvent>(eventSchema, eventToAvro, eventFromAvro, registry, storedTopics, log)
  const raw = await avroCodec<RawWebhookRequest>(
    rawRequestSchema,
    rawRequestToAvro,
    rawRequestFromAvro,
    registry,
    [topics.raw, topics.rawSlow],
    log,
  )
  return { event: stored, stored, raw }
}

/**
 * One record type's codec; with a registry, its schema is registered under `<topic>-value` for each
 * topic first. The registry checks it against each subject's compatibility level (Confluent's
 * default: BACKWARD); a refusal stops startup with SCHEMA_INCOMPATIBLE naming the subject.
 */
export async function avroCodec<T>(
  schema: object,
  toAvro: (value: T) => unknown,
  fromAvro: (value: never) => T,
  registry: SchemaRegistry | undefined,
  topics: string[],
  log: Logger,
): Promise<Codec<T, Buffer>> {
  const type = avsc.Type.forSchema(schema as avsc.Schema, { wrapUnions: 'auto' })
  const fingerprint = singleObjectFingerprint(type)
  const header = Buffer.from([...MAGIC_SINGLE_OBJECT, ...fingerprint])
  const subjects = topics.map((topic) => `${topic}-value`)
  let schemaId: number | undefined
  if (registry) {
    // The full schema (docs, defaults, logical types): what the registry's compatibility checks and readers need.
    const text = JSON.stringify(schema)
    // One after another: a refusal names the first subject that refused, and the next are not touched.
    for (const subject of subjects) {
      const id = await registry.register(subject, text)
      schemaId ??= id
    }
  }
  const resolvers = new Map<number, avsc.Resolver | Promise<void>>()

  function resolverFor(id: number): avsc.Resolver | undefined {
    if (id === schemaId) return undefined
    const known = resolvers.get(id)
    if (known && !(known instanceof Promise)) return known
    if (!registry)
      throw new Error(`record written with schema registry id ${id}; set SLUICE_SCHEMA_REGISTRY_URL to read it`)
    if (!known) {
      const fetching = registry.schemaById(id).then(
        (writer) =>
          void resolvers.set(id, type.createResolver(avsc.Type.forSchema(JSON.parse(writer), { wrapUnions: 'auto' }))),
        (err) => {
          log.error({ err, schemaId: id }, 'could not load a writer schema from the registry')
          resolvers.delete(id) // the next redelivery tries again
        },
      )
      resolvers.set(id, fetching)
    }
    throw new Error(`record written with schema id ${id}, not loaded yet: fetching it (the batch is redelivered)`)
  }

  return {
    encode(value) {
      const body = type.toBuffer(toAvro(value))
      if (schemaId === undefined) return Buffer.concat([header, body])
      const prefix = Buffer.alloc(5)
      prefix[0] = MAGIC_CONFLUENT
      prefix.writeUInt32BE(schemaId, 1)
      return Buffer.concat([prefix, body])
    },
    decode(buffer) {
      if (buffer[0] === JSON_OBJECT) return JSON.parse(buffer.toString('utf8')) as T
      if (buffer[0] === MAGIC_SINGLE_OBJECT[0] && buffer[1] === MAGIC_SINGLE_OBJECT[1]) {
        if (!buffer.subarray(2, 10).equals(fingerprint))
          throw new Error(`Avro record of an unknown schema (fingerprint ${buffer.subarray(2, 10).toString('hex')})`)
        return fromAvro(type.fromBuffer(buffer.subarray(10)) as never)
      }
      if (buffer[0] === MAGIC_CONFLUENT && buffer.length >= 5) {
        return fromAvro(type.fromBuffer(buffer.subarray(5), resolverFor(buffer.readUInt32BE(1))) as never)
      }
      throw new Error(`not an Avro or JSON record (first byte 0x${buffer[0]?.toString(16)})`)
    },
  }
}

// CRC-64-AVRO (Rabin) over the schema's Parsing Canonical Form, as the Avro spec defines the
// single-object encoding's fingerprint. avsc's own fingerprint() hashes with md5/sha256 only.
const EMPTY = 0xc15d213aa4d7a795n
const TABLE = Array.from({ length: 256 }, (_, i) => {
  let fp = BigInt(i)
  for (let j = 0; j < 8; j++) fp = (fp >> 1n) ^ (EMPTY & -(fp & 1n))
  return fp
})

export function crc64Avro(bytes: Buffer): bigint {
  let fp = EMPTY
  for (const byte of bytes) fp = (fp >> 8n) ^ TABLE[Number((fp ^ BigInt(byte)) & 0xffn)]
  return fp
}

/** avsc's schema() is the Parsing Canonical Form (no docs, defaults or logical types; canonical key order). */
export function singleObjectFingerprint(type: avsc.Type): Buffer {
  const out = Buffer.alloc(8)
  out.writeBigUInt64LE(crc64Avro(Buffer.from(JSON.stringify(type.schema()))))
  return out
}
