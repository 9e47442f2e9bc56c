// An app's registration as each SDK sends it (sdk/register.ts): keys in any case, Python's `appname`
// and `deploy_type`, the SDK from the body or the header, Inngest's option shapes checked by the code
// that checks a JavaScript function's, a refused SDK version, and errors naming the function and field.
import t from 'tap'
import { parseRegistration } from '../../sdk/register.ts'

const url = 'http://127.0.0.1:3000/api/inngest'
const fn = (extra: Record<string, unknown> = {}) => ({
  id: 'shop-notify',
  name: 'Notify',
  triggers: [
    { event: 'shop/order.placed', expression: 'event.data.total > 10' },
    { cron: 'TZ=Europe/Paris 0 9 * * *' },
  ],
  steps: { step: { id: 'step', name: 'step', runtime: { type: 'http', url }, retries: { attempts: 5 } } },
  ...extra,
})

t.test('the JS out-of-band shape: the composite ID, triggers, retries from attempts, runtime http', async (t) => {
  const r = parseRegistration(
    { url, appName: 'shop', sdk: 'js:v3.54.2', framework: 'express', functions: [fn()] },
    'production',
  )
  t.same(r.sdk, { language: 'js', version: '3.54.2' })
  t.equal(r.framework, 'express')
  t.match(r.functions[0], {
    env: 'production',
    key: 'shop-notify',
    appId: 'shop',
    functionId: 'notify',
    name: 'Notify',
    triggers: [{ event: 'shop/order.placed', if: 'event.data.total > 10' }, { cron: 'TZ=Europe/Paris 0 9 * * *' }],
    retries: 5,
    runtime: { kind: 'http', url },
  })
})

t.test("a function that names no retries gets Inngest's default, 4", async (t) => {
  const none = fn({ steps: { step: { id: 'step', name: 'step', runtime: { type: 'http', url } } } })
  const r = parseRegistration({ url, appName: 'shop', sdk: 'js:v4.24.0', functions: [none] }, 'production')
  t.equal(r.functions[0].retries, 4)
})

t.test("Python's spelling (appname, deploy_type) and the SDK from the header", async (t) => {
  const r = parseRegistration(
    { URL: url, appname: 'shop', deploy_type: 'ping', functions: [fn()] },
    'staging',
    'inngest-py:v0.5.19',
  )
  t.equal(r.appId, 'shop')
  t.same(r.sdk, { language: 'py', version: '0.5.19' })
  t.equal(r.functions[0].env, 'staging')
})

t.test(
  "Inngest's flow options: throttle's old count, account scope, timeouts, cancel, and internal events",
  async (t) => {
    const r = parseRegistration(
      {
        url,
        appName: 'shop',
        functions: [
          fn({
            throttle: { count: 3, period: '10s', key: 'event.data.user' },
            concurrency: [{ limit: 2, key: 'event.data.user', scope: 'account' }],
            timeouts: { finish: '30s' },
            cancel: [{ event: 'shop/order.cancelled', if: 'async.data.id == event.data.id', timeout: '1h' }],
            triggers: [{ event: 'inngest/function.failed', expression: "event.data.function_id == 'shop-x'" }],
          }),
        ],
      },
      'production',
    )
    const f = r.functions[0]
    t.match(f.flow, { throttle: { limit: 3, periodMs: 10_000, burst: 1 }, concurrency: [{ limit: 2, scope: 'env' }] })
    t.equal(f.timeoutMs, 30_000)
    t.same(f.cancelOn, [{ event: 'shop/order.cancelled', if: 'async.data.id == event.data.id', timeoutMs: 3_600_000 }])
    t.same(f.triggers, [{ event: 'sluice/function.failed', if: "event.data.function_id == 'shop-x'" }])
  },
)

t.test('a bad option names the function and the field; nothing is taken', async (t) => {
  t.throws(
    () =>
      parseRegistration(
        { url, appName: 'shop', functions: [fn({ throttle: { limit: 0, period: '1s' } })] },
        'production',
      ),
    {
      code: 'SDK_SYNC_INVALID',
      message: /functions\[0\] \("shop-notify"\): .*throttle\.limit.*must be an integer from 1/,
    },
  )
  t.throws(() => parseRegistration({ url: 'not a url', appName: 'shop', functions: [] }, 'production'), {
    code: 'SDK_SYNC_INVALID',
    message: /^url: /,
  })
  t.throws(() => parseRegistration({ url, functions: [] }, 'production'), {
    code: 'SDK_SYNC_INVALID',
    message: /appName/,
  })
  t.throws(() => parseRegistration({ url, appName: 'shop', functions: [fn(), fn()] }, 'production'), {
    message: /functions\[1\]\.id: "shop-notify" is there twice/,
  })
})

t.test('npm inngest 3.22.0 to 3.53.1 are refused; 3.54.2 and 4.x are taken', async (t) => {
  for (const v of ['3.22.0', '3.40.1', '3.53.1'])
    t.throws(() => parseRegistration({ url, appName: 'shop', sdk: `js:v${v}`, functions: [] }, 'production'), {
      code: 'SDK_VERSION_REFUSED',
      message: /can expose the signing key/,
    })
  for (const v of ['3.21.9', '3.54.2', '4.24.0'])
    t.doesNotThrow(() => parseRegistration({ url, appName: 'shop', sdk: `js:v${v}`, functions: [] }, 'production'), v)
})

t.test("the SDKs' bearer for /fn/register: JS and Go with the key's prefix, Python without", async (t) => {
  const { bearerHoldsKey, hashedSigningKey } = await import('../../sdk/signature.ts')
  const key = `signkey-prod-${'ab'.repeat(32)}`
  const hashed = hashedSigningKey(key)
  t.match(hashed, /^signkey-prod-[0-9a-f]{64}$/)
  t.ok(bearerHoldsKey(`Bearer ${hashed}`, key), 'prefixed (JS, Go)')
  t.ok(bearerHoldsKey(`Bearer ${hashed.replace('signkey-prod-', '')}`, key), 'bare hash (Python)')
  t.notOk(bearerHoldsKey(`Bearer ${hashedSigningKey(`signkey-prod-${'cd'.repeat(32)}`)}`, key), 'another key')
  t.notOk(bearerHoldsKey(undefined, key), 'none')
})
