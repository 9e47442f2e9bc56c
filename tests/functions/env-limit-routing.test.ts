// An env-scoped concurrency limit holds across runners or the function is refused (issue 52, item 6):
// where its runs cannot be routed by the limit's key (another option keyed otherwise or not at all,
// or two env-scoped limits), registration fails with FLOW_ENV_LIMIT_UNROUTED naming the options, in
// both modes, and nothing of the sync is registered.
import t from 'tap'
import { join } from 'node:path'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createRocksControlStore } from '../../control/rocksdb.ts'
import { createEnvs } from '../../control/envs.ts'
import { createFunctionRegistry, type FunctionRegistration } from '../../control/functions.ts'
import type { FlowControl } from '../../core/flow.ts'
import { removeDir, startServer, tempDir } from '../helpers/server.ts'

const dir = await tempDir()
const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
t.teardown(async () => {
  await rocks.close()
  await removeDir(dir)
})
const control = await createRocksControlStore(rocks)
const registry = createFunctionRegistry(control, createEnvs(control))

const fn = (functionId: string, flow: FlowControl): FunctionRegistration => ({
  env: 'production',
  key: `app-${functionId}`,
  appId: 'app',
  functionId,
  name: functionId,
  triggers: [{ event: 'shop/order' }],
  flow,
  retries: 0,
})
const envLimit = (key: string) => ({ limit: 1, key, scope: 'env' as const })
const refusal = async (flow: FlowControl) => {
  const err: any = await registry.sync([fn('fine', {}), fn('f', flow)], { kind: 'all' }).catch((e) => e)
  t.equal(registry.list().length, 0, 'nothing of the sync is registered')
  return { code: err.code, statusCode: err.statusCode, message: err.message }
}

t.test('another option keyed otherwise, or by nothing: refused naming them', async (t) => {
  const throttled = await refusal({
    concurrency: [envLimit('event.data.customer')],
    throttle: { limit: 5, periodMs: 1000, burst: 1, key: 'event.data.user' },
  })
  t.same(throttled, {
    code: 'FLOW_ENV_LIMIT_UNROUTED',
    statusCode: 400,
    message:
      'function "f" of app "app" (env production): concurrency[0] is env-scoped by key "event.data.customer" but ' +
      'throttle (key "event.data.user") uses another, so its runs cannot be routed by it and the limit would be ' +
      'counted per runner: give it the key "event.data.customer", or make the limit scope "fn"',
  })
  const several = await refusal({
    concurrency: [envLimit('event.data.customer'), { limit: 10, scope: 'fn' }],
    debounce: { periodMs: 1000, key: 'event.data.customer' },
    singleton: { mode: 'skip' },
  })
  t.match(several.message, /but concurrency\[1\] \(no key\), singleton \(no key\) use another, .* give them the key/)
})

t.test('two env-scoped limits: refused naming both', async (t) => {
  const two = await refusal({ concurrency: [envLimit('event.data.customer'), envLimit('event.data.account')] })
  t.equal(two.code, 'FLOW_ENV_LIMIT_UNROUTED')
  t.equal(
    two.message,
    'function "f" of app "app" (env production): concurrency[0] (key "event.data.customer"), ' +
      'concurrency[1] (key "event.data.account") are two env-scoped concurrency limits; one process can count ' +
      'only one across runners: keep one, or make the others scope "fn"',
  )
})

t.test('options that agree on the key are registered', async (t) => {
  const agreeing = fn('agreeing', {
    concurrency: [envLimit('event.data.customer')],
    throttle: { limit: 5, periodMs: 1000, burst: 1, key: 'event.data.customer' },
    idempotency: 'event.data.customer',
  })
  const docs = await registry.sync([agreeing, fn('fn-scoped', { concurrency: [{ limit: 2, scope: 'fn' }] })], {
    kind: 'all',
  })
  t.same(
    docs.map((d) => d.functionId),
    ['agreeing', 'fn-scoped'],
  )
})

t.test('a node serving such a function from its functions file does not start', async (t) => {
  const started = await startServer({
    flags: { functionsFile: join(import.meta.dirname, 'fixtures/flow-env-unrouted.ts') },
  }).catch((err) => err)
  if (!(started instanceof Error)) await started.stop()
  t.equal(started.code, 'FLOW_ENV_LIMIT_UNROUTED')
  t.match(started.message, /function "per-customer" .* throttle \(key "event\.data\.user"\) uses another/)
})
