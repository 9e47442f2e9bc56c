// Captures what each real Inngest SDK sends and answers (the protocol facts in docs/inngest-sdk-protocol.md)
// into tests/sdk/fixtures/<kind>/*.json, secrets redacted:
//   node tests/sdk/capture/capture.ts [ts-v4 ts-v3 python go] && npx biome format --write tests/sdk/fixtures
// The app runs as deployed (tests/helpers/sdk-app.ts); a recording stand-in plays the server.
import { createHash } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type SdkApp, type SdkKind, startSdkApp } from '../../helpers/sdk-app.ts'
import { type DriveOptions, drive, type Exchange, type RunEvent } from './drive.ts'
import { answerOf } from './drive.ts'
import { callApp, checkSignature, type FakeServer, startFakeServer } from './fake-server.ts'

export const SIGNING_KEY = `signkey-test-${'0123456789abcdef'.repeat(4)}`
export const EVENT_KEY = 'capture-event-key'
const out = fileURLToPath(new URL('../fixtures/', import.meta.url))
const root = fileURLToPath(new URL('../../../', import.meta.url))

const ev = (name: string, data: Record<string, unknown>): RunEvent => ({
  name,
  data,
  id: `01EV${name}`,
  ts: 1,
  user: {},
})

/** One run per function: [fn id, events, options]. */
export function runsFor(appId: string): [string, RunEvent[], Partial<DriveOptions>][] {
  const failed = ev('inngest/function.failed', {
    function_id: `${appId}-on-failure`,
    run_id: '01CAPTUREFAILEDRUN',
    error: { name: 'Error', message: 'failed for f1' },
    event: ev('sdk/on-failure', { id: 'f1' }),
  })
  return [
    ['steps', [ev('sdk/steps', { a: 1, b: 2 })], {}],
    ['steps', [ev('sdk/steps', { a: 1, b: 2 })], { disableImmediateExecution: true }],
    ['parallel', [ev('sdk/parallel', { a: 1, b: 2 })], {}],
    ['parallel', [ev('sdk/parallel', { a: 1, b: 2 })], { disableImmediateExecution: true }],
    ['sleep', [ev('sdk/sleep', { id: 's1' })], {}],
    ['wait', [ev('sdk/wait', { id: 'w1' })], {}],
    ['wait', [ev('sdk/wait', { id: 'w2' })], { waitTimesOut: true }],
    ['invoke', [ev('sdk/invoke', { a: 3, b: 4 })], { invokeResult: { sum: 7 } }],
    ['invoke', [ev('sdk/invoke', { a: 3, b: 4 })], { invokeError: { name: 'Error', message: 'invoked run failed' } }],
    ['fail', [ev('sdk/fail', { id: 'x1' })], { maxAttempts: 2 }],
    ['retry', [ev('sdk/retry', { id: 'r1' })], { maxAttempts: 3 }],
    ['concurrency', [ev('sdk/concurrency', { id: 'c1', key: 'k' })], {}],
    ['batch', [1, 2, 3].map((n) => ev('sdk/batch', { id: `b${n}` })), {}],
    ['cancel', [ev('sdk/cancellable', { id: 'z1' })], {}],
    ['cron', [ev('inngest/scheduled.timer', { cron: 'TZ=Europe/Paris 0 3 * * *' })], {}],
    ['on-failure', [ev('sdk/on-failure', { id: 'f1' })], { maxAttempts: 1 }],
    // No max_attempts in ctx: the SDKs answer StepError each time; after 2 the step's memo is its {error}.
    ['on-failure', [ev('sdk/on-failure', { id: 'f2' })], { driverAttempts: 2 }],
    ['on-failure-failure', [failed], {}],
    ['send', [ev('sdk/send', { id: 'e1' })], {}],
  ]
}

async function withApp<T>(kind: SdkKind, dev: boolean, body: (app: SdkApp, fake: FakeServer) => Promise<T>) {
  const fake = await startFakeServer()
  const app = await startSdkApp(kind, {
    sluiceUrl: fake.url,
    dev,
    ...(!dev && { signingKey: SIGNING_KEY, eventKey: EVENT_KEY }),
  })
  try {
    return await body(app, fake)
  } finally {
    await app.stop()
    await fake.close()
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300))

/** The sync exchanges: introspection, in-band (signed, unsigned), out-of-band and what it POSTs. */
export async function captureSync(app: SdkApp, fake: FakeServer, signingKey?: string) {
  const record: Record<string, unknown> = {}
  const exchange = async (name: string, init: Parameters<typeof callApp>[1] & { path?: string }) => {
    const before = fake.requests.length
    const a = await callApp(app.url + (init.path ?? ''), init)
    await settle()
    const signature = signingKey ? checkSignature(a.headers['x-inngest-signature'], a.text, signingKey) : undefined
    record[name] = {
      request: {
        method: init.method,
        query: init.path ?? '',
        headers: init.headers ?? {},
        body: init.body ?? null,
        signed: !!init.signingKey,
      },
      answer: answerOf(a),
      ...(signingKey && { answerSignature: signature ?? 'valid' }),
      serverReceived: fake.requests.slice(before),
    }
  }
  await exchange('introspection-unsigned', { method: 'GET' })
  if (signingKey) await exchange('introspection-signed', { method: 'GET', signingKey })
  // Inngest's server says what it is; inngest-py refuses a sync from the other kind (server_kind_mismatch).
  const inBand = { 'x-inngest-sync-kind': 'in_band', 'x-inngest-server-kind': signingKey ? 'cloud' : 'dev' }
  await exchange('in-band-signed', { method: 'PUT', headers: inBand, body: { url: app.url }, signingKey })
  if (signingKey) await exchange('in-band-unsigned', { method: 'PUT', headers: inBand, body: { url: app.url } })
  await exchange('out-of-band', { method: 'PUT' })
  if (signingKey) {
    await exchange('put-signed-without-sync-kind', { method: 'PUT', body: { url: app.url }, signingKey })
    await exchange('trust-probe-signed', { method: 'POST', path: '?probe=trust', body: {}, signingKey })
    await exchange('trust-probe-unsigned', { method: 'POST', path: '?probe=trust', body: {} })
  }
  return record
}

export async function captureRuns(app: SdkApp, signingKey?: string) {
  const runs: Record<string, Exchange[]> = {}
  for (const [fn, events, options] of runsFor(app.appId)) {
    const variant = options.disableImmediateExecution
      ? '.disable-immediate-execution'
      : options.waitTimesOut
        ? '.timed-out'
        : options.invokeError
          ? '.invoke-error'
          : options.driverAttempts
            ? '.no-max-attempts'
            : ''
    const name = `${fn}${variant}`
    runs[name] = await drive({ appUrl: app.url, fnId: `${app.appId}-${fn}`, events, signingKey, ...options })
  }
  return runs
}

async function captureKind(kind: SdkKind): Promise<void> {
  const dir = join(out, kind)
  mkdirSync(dir, { recursive: true })
  const write = (name: string, value: unknown, app: SdkApp, fake: FakeServer) =>
    writeFileSync(join(dir, `${name}.json`), `${redact(JSON.stringify(value, null, 2), app, fake)}\n`)
  await withApp(kind, false, async (app, fake) => {
    write('sync.production', await captureSync(app, fake, SIGNING_KEY), app, fake)
    write('runs.production', await captureRuns(app, SIGNING_KEY), app, fake)
    const badSignature = await callApp(`${app.url}?fnId=${app.appId}-steps&stepId=step`, {
      method: 'POST',
      body: { event: ev('sdk/steps', { a: 1, b: 2 }), events: [], steps: {}, ctx: { run_id: 'r', attempt: 0 } },
      signingKey: 'signkey-test-ffff',
    })
    const unsigned = await callApp(`${app.url}?fnId=${app.appId}-steps&stepId=step`, {
      method: 'POST',
      body: { event: ev('sdk/steps', { a: 1, b: 2 }), events: [], steps: {}, ctx: { run_id: 'r', attempt: 0 } },
    })
    write('negative.production', { badSignature: answerOf(badSignature), unsigned: answerOf(unsigned) }, app, fake)
    if (kind === 'ts-v4') {
      const checkpoint = await drive({
        appUrl: app.url,
        fnId: `${app.appId}-steps`,
        events: [ev('sdk/steps', { a: 1, b: 2 })],
        signingKey: SIGNING_KEY,
        ctx: { fn_id: '00000000-0000-4000-8000-000000000001', qi_id: 'capture-queue-item' },
      })
      write('runs.checkpoint-ctx', { run: checkpoint, serverReceived: fake.requests.slice(-5) }, app, fake)
    }
  })
  await withApp(kind, true, async (app, fake) => {
    write('sync.dev', await captureSync(app, fake), app, fake)
    write('runs.dev', { steps: (await captureRuns(app)).steps }, app, fake)
  })
}

/** Keys, their hashes, signatures and ports out; the rest exactly as the SDK sent it. */
export function redact(text: string, app: SdkApp, fake: FakeServer): string {
  const appPort = new URL(app.url).port
  const serverPort = new URL(fake.url).port
  const hashedKey = `signkey-test-${createHash('sha256')
    .update(Buffer.from(SIGNING_KEY.slice(13), 'hex'))
    .digest('hex')}`
  return text
    .replaceAll(SIGNING_KEY, '<signing key>')
    .replaceAll(SIGNING_KEY.replace(/^signkey-test-/, ''), '<signing key without prefix>')
    .replaceAll(EVENT_KEY, '<event key>')
    .replaceAll(hashedKey, '<hashed signing key: signkey-test- + sha256(hex-decoded key)>')
    .replaceAll(hashedKey.replace(/^signkey-test-/, ''), '<sha256(hex-decoded key)>')
    .replace(/t=\d+&s=[0-9a-f]+/g, 't=<unix seconds>&s=<hmac hex>')
    .replaceAll(root, '<repo>/')
    .replaceAll('/work/main/', '<repo>/')
    .replaceAll(`127.0.0.1:${appPort}`, '127.0.0.1:<app port>')
    .replaceAll(`127.0.0.1:${serverPort}`, '127.0.0.1:<server port>')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kinds = (process.argv.length > 2 ? process.argv.slice(2) : ['ts-v4', 'ts-v3', 'python', 'go']) as SdkKind[]
  for (const kind of kinds) {
    process.stdout.write(`capturing ${kind}\n`)
    await captureKind(kind)
  }
}
