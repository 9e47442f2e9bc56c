// The JSON text a record was parsed from, kept beside the parsed object (by identity), so a
// store that writes the same object as JSON (store/rocksdb.ts) need not serialize it again.
// The bus codec that parses records fills it in (bus/codec.ts `jsonCodec({ keepText })`); a
// store only asks. Neither knows the other's format: an object without a text is serialized.
// Held weakly: the text lives exactly as long as the object; an object must not be changed
// after parsing while its text is kept.
const texts = new WeakMap<object, Buffer>()

export function keepJsonText(value: unknown, text: Buffer): void {
  if (typeof value === 'object' && value !== null) texts.set(value, text)
}

export function jsonTextOf(value: object): Buffer | undefined {
  return texts.get(value)
}
