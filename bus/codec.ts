// Record codecs. JSON is the default; the Kafka adapter may swap in Avro (bus/avro.ts).
import { keepJsonText } from '../core/json-text.ts'

export interface Codec<T, Encoded extends Buffer | string = Buffer | string> {
  /** A string goes on the bus as its UTF-8 bytes (no intermediate Buffer). */
  encode(value: T): Encoded
  decode(buffer: Buffer): T
}

/** `keepText`: remember each record's JSON text for a consumer that stores it as is (core/json-text.ts). */
export function jsonCodec<T>(options: { keepText?: boolean } = {}): Codec<T, string> {
  return {
    encode: (value) => JSON.stringify(value),
    decode: options.keepText
      ? (buffer) => {
          const value = JSON.parse(buffer.toString('utf8')) as T
          keepJsonText(value, buffer)
          return value
        }
      : (buffer) => JSON.parse(buffer.toString('utf8')) as T,
  }
}
