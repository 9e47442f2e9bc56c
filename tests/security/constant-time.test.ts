// Issue 9: the signing key is compared in constant time. The guard hashes the given token and
// compares digests with crypto.timingSafeEqual on every request, whatever the token's length,
// so neither a prefix nor the length of the key can be learnt from response times. (Event keys
// never meet a comparison: they are looked up by their SHA-256, control/keys.ts.)
import t from 'tap'
import * as crypto from 'node:crypto'
import type { FastifyRequest } from 'fastify'

const KEY = 'signing-key-0123456789abcdef'
const calls: Array<[Buffer, Buffer]> = []
const { signingKeyGuard } = await t.mockImport<typeof import('../../api/auth.ts')>('../../api/auth.ts', {
  'node:crypto': {
    ...crypto,
    timingSafeEqual: (a: Buffer, b: Buffer) => {
      calls.push([Buffer.from(a), Buffer.from(b)])
      return crypto.timingSafeEqual(a, b)
    },
  },
})
const guard = signingKeyGuard(false, KEY)
const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest()
const request = (authorization?: string) =>
  ({ headers: authorization === undefined ? {} : { authorization } }) as FastifyRequest

t.test(
  'every request, of any token length or none, goes through one timingSafeEqual of two SHA-256 digests',
  async (t) => {
    const tokens = ['', 'x', KEY.slice(0, -1), `${KEY}x`, KEY.replace(/.$/, 'g'), 'y'.repeat(10_000)]
    for (const authorization of [undefined, 'Basic abc', ...tokens.map((token) => `Bearer ${token}`)]) {
      calls.length = 0
      await t.rejects(
        guard(request(authorization)),
        { code: 'UNAUTHORIZED' },
        JSON.stringify(authorization)?.slice(0, 30),
      )
      t.equal(calls.length, 1, 'compared once: no early return before the comparison')
      const [given, expected] = calls[0]
      t.same([given.length, expected.length], [32, 32])
      t.same(expected, sha256(KEY), 'against the digest of the key, not the key')
      const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : ''
      t.same(given, sha256(token), 'the digest of what was sent')
    }
  },
)

t.test('the right key passes through the same comparison', async (t) => {
  calls.length = 0
  await guard(request(`bearer ${KEY}`))
  t.equal(calls.length, 1)
  t.same(calls[0], [sha256(KEY), sha256(KEY)])
})

t.test('without a configured signing key nothing passes', async (t) => {
  await t.rejects(signingKeyGuard(false, undefined)(request(`Bearer ${KEY}`)), { code: 'UNAUTHORIZED' })
})
