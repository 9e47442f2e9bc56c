// Record codecs. JSON is the default; the Kafka adapter may swap in Avro (bus/avro.ts).
export interface Codec<T> {
  encode(value: T): Buffer
  decode(buffer: Buffer): T
}

export function jsonCodec<T>(): Codec<T> {
  return {
    encode: (value) => Buffer.from(JSON.stringify(value)),
    decode: (buffer) => JSON.parse(buffer.toString('utf8')) as T,
  }
}
