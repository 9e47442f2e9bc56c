// Record codecs. JSON is the default; the Kafka adapter may swap in Avro (bus/avro.ts).
export interface Codec<T, Encoded extends Buffer | string = Buffer | string> {
  /** A string goes on the bus as its UTF-8 bytes (no intermediate Buffer). */
  encode(value: T): Encoded
  decode(buffer: Buffer): T
}

export function jsonCodec<T>(): Codec<T, string> {
  return {
    encode: (value) => JSON.stringify(value),
    decode: (buffer) => JSON.parse(buffer.toString('utf8')) as T,
  }
}
