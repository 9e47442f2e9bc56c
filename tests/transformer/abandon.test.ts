// A call the caller gave up on (the shared lane's time budget) costs the isolates no more than
// it already has: not started, it never starts; stopped, it is not run a second time.
import t from 'tap'
import { createSandbox } from '../../transformer/sandbox.ts'
import { LIMITS, request } from './payloads.ts'

const LOOP = 'function transform() { while (true) {} }'
const OK = 'function transform(evt) { return { name: "ok/x", data: { n: evt.n } } }'

t.test('a queued call given up on resolves at once as TRANSFORM_TIMEOUT and never starts', async (t) => {
  const sandbox = createSandbox(LIMITS, { isolates: 1 })
  t.teardown(() => sandbox.close())
  const order: string[] = []
  const looping = sandbox.run('loop', LOOP, request({})).then((r) => {
    order.push('loop stopped')
    return r
  })
  const controller = new AbortController()
  let started = 0
  const queued = sandbox
    .run('queued', OK, request({ n: 1 }), { signal: controller.signal, onStart: () => started++ })
    .then((r) => {
      order.push('queued settled')
      return r
    })
  controller.abort()
  const [given, stopped] = await Promise.all([queued, looping])
  t.same(given, { kind: 'error', code: 'TRANSFORM_TIMEOUT', message: 'the caller gave up waiting for the transform' })
  t.equal(stopped.kind === 'error' && stopped.code, 'TRANSFORM_TIMEOUT')
  t.same(order, ['queued settled', 'loop stopped'], 'settled before the isolate was free again')
  t.equal(started, 0, 'it never ran')
})

t.test('a running call given up on is stopped once, not run again alone as a stopped call otherwise is', async (t) => {
  const sandbox = createSandbox(LIMITS, { isolates: 1 })
  t.teardown(() => sandbox.close())
  let keptStarts = 0
  const kept = await sandbox.run('kept', LOOP, request({}), { onStart: () => keptStarts++ })
  t.equal(kept.kind === 'error' && kept.code, 'TRANSFORM_TIMEOUT')
  t.equal(keptStarts, 2, 'a stopped call is run a second time, alone, before it is a TIMEOUT')

  const controller = new AbortController()
  let abandonedStarts = 0
  const abandoned = await sandbox.run('abandoned', LOOP, request({}), {
    signal: controller.signal,
    onStart: () => {
      abandonedStarts++
      controller.abort()
    },
  })
  t.equal(abandoned.kind === 'error' && abandoned.code, 'TRANSFORM_TIMEOUT')
  t.equal(abandonedStarts, 1, 'given up on: stopped once, never run again')
  t.same(
    await sandbox.run('after', OK, request({ n: 2 })),
    { kind: 'ok', value: { name: 'ok/x', data: { n: 2 } } },
    'the isolate serves the next call',
  )
})
