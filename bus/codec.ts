// Record codecs. JSON is the default; the Kafka adapter may swap in Avro (bus/avro.ts).
import type { ConsumedRecord } from './types.ts'

export interface Codec<T, Encoded extends Buffer | string = Buffer | string> {
  /** A string goes on the bus as its UTF-8 bytes (no intermediate Buffer). */
  encode(value: T): Encoded
  decode(buffer: Buffer): T
  /**
   * Takes the value a producer in this process encoded with an equal codec, instead of decoding its
   * bytes (`buffer`). Only codecs for which that is the same value have it: JSON of plain data does.
   */
  adopt?(value: T, buffer: Buffer): T
  /** Set when a record's bytes are its value's JSON text: a store that writes JSON keeps them as they are. */
  jsonText?: true
}

/** A consumed record's value: the producer's own when the log handed it on and the codec may adopt it, else decoded. */
export function decodeRecord<T>(codec: Codec<T>, record: ConsumedRecord): T {
  return record.decoded !== undefined && codec.adopt
    ? codec.adopt(record.decoded as T, record.value)
    : codec.decode(record.value)
}

export function jsonCodec<T>(): Codec<T, string> {
  return {
    encode: (value) => JSON.stringify(value),
    decode: (buffer) => JSON.parse(buffer.toString('utf8')) as T,
    // Values published as JSON are plain data (parsed JSON, or built from it field by field).
    adopt: (value) => value,
    jsonText: true,
  }
}
