// The signature-verification pattern: a function gets `{raw, sig}` in `data`, checks the
// producer's HMAC, and throws NonRetriableError on a bad signature.
import t from 'tap'
import { createHmac } from 'node:crypto'
import { startServer } from '../helpers/server.ts'
import { BASICS, finishedRuns, sendEvent } from './fixtures/rest.ts'
import { SIGNING_SECRET } from './fixtures/basics.ts'

const server = await startServer({ flags: { functionsFile: BASICS } })
t.teardown(() => server.stop())

const raw = JSON.stringify({ invoice: 'in_42', amount: 1200 })
const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex')

t.test('a payload with a good signature is verified and handled', async (t) => {
  const eventId = await sendEvent(server.url, { name: 'test/signed', data: { raw, sig: sign(SIGNING_SECRET, raw) } })
  const [run] = await finishedRuns(server.url, eventId)
  t.equal(run.status, 'completed')
  t.same(run.output, { invoice: 'in_42', amount: 1200 })
  t.same(
    run.steps.map((s: any) => s.id),
    ['handle'],
  )
})

t.test('a forged signature fails the run at once with NonRetriableError', async (t) => {
  const forged = await sendEvent(server.url, {
    name: 'test/signed',
    data: { raw, sig: sign('not-the-producer-secret', raw) },
  })
  const tampered = await sendEvent(server.url, {
    name: 'test/signed',
    data: { raw: raw.replace('1200', '1'), sig: sign(SIGNING_SECRET, raw) },
  })
  for (const eventId of [forged, tampered]) {
    const [run] = await finishedRuns(server.url, eventId)
    t.equal(run.status, 'failed')
    t.equal(run.attempts, 1, 'no retry')
    t.same(run.steps, [], 'the payload was never handled')
    t.equal(run.error.name, 'NonRetriableError')
    t.equal(run.error.message, 'signature does not match')
  }
})
