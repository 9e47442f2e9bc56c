// Secrets never reach a log line: a whole embedded session (keys, webhooks, events, a failing
// transform, dead letters, replay, a bad signature, wrong keys, unknown routes) runs with the
// logger at trace level into memory, then every line is searched for every secret the
// session created or sent. A short fingerprint stands in where a log needs to say which one.
import { Writable } from 'node:stream'
import t from 'tap'
import { loadConfig } from '../../config/config.ts'
import { startEmbedded } from '../../server/embedded.ts'
import { createLogger } from '../../server/log.ts'
import { fingerprint } from '../../core/fingerprint.ts'
import { eventually, removeDir, tempDir, TEST_SIGNING_KEY } from '../helpers/server.ts'
import { hmacHex } from './helpers.ts'

const lines: string[] = []
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString().split('\n').filter(Boolean))
    done()
  },
})

const dataDir = await tempDir()
const config = loadConfig(
  'start',
  {
    port: '0',
    host: '127.0.0.1',
    dataDir,
    signingKey: TEST_SIGNING_KEY,
    logLevel: 'trace',
    transformCpuTimeMs: '50',
    transformWallTimeMs: '200',
  },
  {},
)
const server = await startEmbedded(config, createLogger('trace', sink))
t.teardown(async () => {
  await server.stop()
  await removeDir(dataDir)
})

const auth = { authorization: `Bearer ${TEST_SIGNING_KEY}` }
async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(server.url + path, {
    method,
    headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await response.text()
  let parsed: any = text
  try {
    parsed = JSON.parse(text)
  } catch {
    /* not JSON */
  }
  return { status: response.status, body: parsed, text }
}
const api = (method: string, path: string, body?: unknown) => call(method, path, body, auth)
const requestOutcome = (hookId: string, requestId: string, attempt = 1) =>
  eventually(async () => {
    const r = await api('GET', `/v1/webhooks/${hookId}/requests/${requestId}`)
    return r.status === 200 && r.body.data.attempt >= attempt ? r.body.data : undefined
  })

t.test(
  'no log line, error or API error body holds a key, signing key, webhook ID, signature or raw body',
  async (t) => {
    const secrets: string[] = [TEST_SIGNING_KEY]
    const errorBodies: string[] = []
    const key = (await api('POST', '/v1/keys', { env: 'production' })).body.data.key as string
    secrets.push(key)
    t.equal((await call('POST', `/e/${key}`, { name: 'app/user.created', data: { n: 1 } })).status, 200)

    const rawBody = JSON.stringify({ type: 'invoice.paid', marker: 'raw-body-marker-8d1f3a' })
    secrets.push('raw-body-marker-8d1f3a')
    const throws = (
      await api('POST', '/v1/webhooks', {
        name: 'Throws',
        transform: 'function transform(evt) { throw new Error("no " + evt.nothing.x) }',
      })
    ).body.data
    const loops = (
      await api('POST', '/v1/webhooks', { name: 'Loops', transform: 'function transform() { for (;;) {} }' })
    ).body.data
    const verificationSecret = 'hmac-secret-4c9e1b7a'
    const signed = (
      await api('POST', '/v1/webhooks', {
        name: 'Signed',
        verification: { preset: 'hmac-sha256', secret: verificationSecret },
      })
    ).body.data
    const plain = (await api('POST', '/v1/webhooks', { name: 'Plain' })).body.data
    // A secret being rotated out, and one refused for its form: neither may show anywhere either.
    const previousSecret = 'hmac-previous-9a2d6c31'
    const rotated = await api('PATCH', `/v1/webhooks/${signed.id}`, {
      verification: { preset: 'hmac-sha256', secret: verificationSecret, previous_secret: previousSecret },
    })
    t.equal(rotated.body.data.verification.rotating, true)
    const refusedSecret = 'whsec_not*base64*refused71'
    const refused = await api('POST', '/v1/webhooks', {
      name: 'Refused',
      verification: { preset: 'standard-webhooks', secret: refusedSecret },
    })
    t.same([refused.status, refused.body.code], [400, 'VERIFICATION_INVALID'])
    errorBodies.push(refused.text)
    const shown = rotated.text + (await api('GET', '/v1/webhooks')).text
    t.notOk(shown.includes(verificationSecret) || shown.includes(previousSecret), 'no API response holds a secret')
    secrets.push(throws.id, loops.id, signed.id, plain.id, verificationSecret, previousSecret, refusedSecret)

    const failed = (await call('POST', `/e/${throws.id}`, rawBody)).body.request_id
    const looped = (await call('POST', `/e/${loops.id}`, rawBody)).body.request_id
    const badSignature = 'sha256=' + hmacHex('not-the-secret', rawBody)
    secrets.push(badSignature.slice('sha256='.length))
    const unsigned = (await call('POST', `/e/${signed.id}`, rawBody, { 'X-Signature': badSignature })).body.request_id
    const delivered = (await call('POST', `/e/${plain.id}`, rawBody)).body.request_id
    const notJson = (await call('POST', `/e/${plain.id}`, '{"m": leak9c2e')).body.request_id
    t.equal((await requestOutcome(throws.id, failed)).error.code, 'TRANSFORM_THREW')
    t.equal((await requestOutcome(loops.id, looped)).error.code, 'TRANSFORM_TIMEOUT')
    t.equal((await requestOutcome(signed.id, unsigned)).error.code, 'SIGNATURE_INVALID')
    t.equal((await requestOutcome(plain.id, delivered)).status, 'delivered')
    const invalid = (await requestOutcome(plain.id, notJson)).error
    t.equal(invalid.code, 'JSON_INVALID')
    t.notMatch(invalid.message, 'leak9c2e', 'the recorded error does not quote the body')
    t.equal((await api('POST', `/v1/webhooks/${throws.id}/requests/${failed}/replay`, {})).status, 202)
    t.equal((await requestOutcome(throws.id, failed, 2)).status, 'failed')
    t.equal((await api('POST', `/v1/webhooks/${loops.id}/requests/replay`, { status: 'failed' })).status, 202)

    secrets.push('leak7f3a')
    const wrongKey = 'sk_wrong0key0that0nobody0issued0x'
    const wrongSigningKey = 'wrong-signing-key-7e2a90'
    secrets.push(wrongKey, wrongSigningKey)
    const refusals = [
      await call('POST', `/e/${wrongKey}`, { name: 'a', data: {} }),
      await call('POST', `/e/${key}`, '{"n": leak7f3a'), // V8's JSON.parse message quotes ~20 characters around the error
      await call('GET', `/e/${key}`),
      await call('GET', `/e/${plain.id}`),
      await call('POST', `/e/${plain.id}/extra`, rawBody),
      await call('GET', '/v1/keys', undefined, { authorization: `Bearer ${wrongSigningKey}` }),
      await api('GET', `/v1/webhooks/${plain.id}/requests/01J0000000000000000000000Z`),
    ]
    t.same(
      refusals.map((r) => r.status >= 400),
      refusals.map(() => true),
      'every one of them is refused',
    )
    errorBodies.push(...refusals.map((r) => r.text))
    await await api('DELETE', `/v1/webhooks/${plain.id}`)
    t.equal((await call('POST', `/e/${plain.id}`, rawBody)).status, 404, 'a deleted webhook ID is refused too')

    t.ok(lines.length > 0, 'the session logged')
    t.ok(
      lines.some((line) => line.includes(fingerprint(throws.id))),
      'a dead letter names its webhook by fingerprint',
    )
    for (const secret of secrets) {
      const logged = lines.filter((line) => line.includes(secret))
      t.same(logged, [], `no log line holds ${fingerprint(secret)}`)
      t.same(
        errorBodies.filter((body) => body.includes(secret)),
        [],
        `no error body holds ${fingerprint(secret)}`,
      )
    }
  },
)

t.test('a fingerprint is short, stable and says nothing of the secret', async (t) => {
  t.equal(fingerprint('wh_abc'), fingerprint('wh_abc'))
  t.not(fingerprint('wh_abc'), fingerprint('wh_abd'))
  t.match(fingerprint('wh_abc'), /^[0-9a-f]{8}$/)
})

t.test('the logger redacts well-known secret and payload fields that slip into a log line anyway', async (t) => {
  const written: string[] = []
  const log = createLogger('info', { write: (line: string) => void written.push(line) })
  const webhookId = 'wh_slipped0into0a0log0line0by0mistake'
  log.info(
    { webhookId, request: { headers: { authorization: 'Bearer sk_live_slipped' }, body: '{"card":"4242"}' } },
    'oops',
  )
  const [line] = written
  t.notMatch(line, webhookId)
  t.notMatch(line, 'sk_live_slipped')
  t.notMatch(line, '4242')
  t.match(JSON.parse(line), {
    webhookId: `{${fingerprint(webhookId)}}`,
    request: { headers: '[redacted]', body: `{${fingerprint('{"card":"4242"}')}}` },
  })
})
