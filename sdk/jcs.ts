// RFC 8785 JSON (JCS), which the SDKs canonicalise a call's body to before checking its signature.
// `canonicalize` is CommonJS whose types declare an ES default export: Node hands ESM its
// module.exports, the function itself, which this gives its real type.
import canonicalizeModule from 'canonicalize'

const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined

export function canonicalJson(value: unknown): string {
  const text = canonicalize(value)
  if (text === undefined) throw new TypeError('not JSON')
  return text
}
