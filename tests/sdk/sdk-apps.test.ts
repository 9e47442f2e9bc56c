// The four SDK test apps (tests/sdk/apps) as tests/helpers/sdk-app.ts deploys them, against the recording
// stand-in of tests/sdk/capture: each app answers a signed in-band sync with its functions, refuses an
// unsigned one in production, and runs `steps` to {sum} under the memos Sluice's executor feeds back.
// This checks the apps and the protocol facts in docs/inngest-sdk-protocol.md; Sluice's own behaviour
// with these apps is tested through the real server (tests/sdk/js-v4.test.ts and the SDK suites).
import t from 'tap'
import { type SdkKind, sdkAvailable, startSdkApp } from '../helpers/sdk-app.ts'
import { captureSync, EVENT_KEY, SIGNING_KEY } from './capture/capture.ts'
import { drive } from './capture/drive.ts'
import { startFakeServer } from './capture/fake-server.ts'

// biome-ignore lint/suspicious/noExplicitAny: captured JSON
type Json = any

for (const kind of ['ts-v4', 'ts-v3', 'python', 'go'] as SdkKind[]) {
  t.test(kind, { skip: sdkAvailable(kind) ? false : 'not provisioned: run tests/infra/provision.sh' }, async (t) => {
    const fake = await startFakeServer()
    t.teardown(() => fake.close())
    const app = await startSdkApp(kind, {
      sluiceUrl: fake.url,
      dev: false,
      signingKey: SIGNING_KEY,
      eventKey: EVENT_KEY,
    })
    t.teardown(() => app.stop())
    const sync: Json = await captureSync(app, fake, SIGNING_KEY)
    const inBand = sync['in-band-signed']
    t.equal(inBand.answer.status, 200, 'signed in-band sync answered')
    t.match(inBand.answerSignature, /^valid/, 'the answer is signed with the same key')
    t.equal(inBand.answer.body.app_id, app.appId)
    const ids = inBand.answer.body.functions.map((fn: Json) => fn.id)
    t.ok(ids.includes(`${app.appId}-steps`), 'functions named <app id>-<function id>')
    t.equal(sync['in-band-unsigned'].answer.status, 401, 'an unsigned in-band sync is refused')
    t.same(inBand.serverReceived, [], 'an in-band sync makes no call back')

    const events = [{ name: 'sdk/steps', data: { a: 1, b: 2 }, id: '01EV', ts: 1, user: {} }]
    const fnId = `${app.appId}-steps`
    const run = await drive({ appUrl: app.url, fnId, events, signingKey: SIGNING_KEY })
    t.same(
      run.map((e) => e.answer.status),
      [206, 206, 200],
    )
    t.same(
      (run[0].answer.body as Json)[0].id,
      '86f7e437faa5a7fce15d1ddcb9eaeaea377667b8',
      'step id hashed: SHA-1 of "a"',
    )
    t.same(run.at(-1)?.answer.body, { sum: 3 })
    const forged = await drive({ appUrl: app.url, fnId, events, signingKey: 'signkey-test-00' })
    t.equal(forged[0].answer.status, 401, 'a call signed with another key is refused')
  })
}
