// Many calls at once: normal transforms keep their exact values while hostile ones are stopped
// beside them; within a batch of one transform only the offending call is charged; the host's
// event loop never waits for an isolate.
import t from 'tap'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { DEFAULTS } from '../../config/settings.ts'
import { createSandbox } from '../../transformer/sandbox.ts'
import type { TransformResult } from '../../transformer/sandbox-types.ts'
import { LIMITS, ROOMY_LIMITS, request } from './payloads.ts'

const NORMAL = `function transform(evt, headers) { return { name: 'calc/' + headers['X-Kind'], id: 'id-' + evt.n, data: { n: evt.n, double: evt.n * 2 } } }`
const HOSTILE = {
  loop: { source: 'function transform() { while (true) {} }', code: 'TRANSFORM_TIMEOUT' },
  bomb: {
    source: 'function transform() { const a = []; while (true) a.push(new Float64Array(4 * 1024 * 1024)) }',
    code: 'TRANSFORM_MEMORY',
  },
  never: { source: 'function transform() { return new Promise(() => {}) }', code: 'TRANSFORM_TIMEOUT' },
} as const
const expected = (kind: string, n: number): TransformResult => ({
  kind: 'ok',
  value: { name: `calc/${kind}`, id: `id-${n}`, data: { n, double: n * 2 } },
})
const codeOf = (r: TransformResult) => (r.kind === 'error' ? r.code : 'ok')

t.test(
  '500 normal calls over time keep their exact values while loops, memory bombs and hung promises run beside them',
  async (t) => {
    // 500 ms of CPU: the memory bomb (20-40 ms of V8's last-resort GCs) always meets the memory
    // limit first, even on a loaded machine where a 100 ms wall-clock bound might stop it sooner.
    const sandbox = createSandbox({ ...LIMITS, cpuTimeMs: 500 }, { isolates: DEFAULTS.transformIsolates })
    t.teardown(() => sandbox.close())
    const delay = monitorEventLoopDelay({ resolution: 10 })
    delay.enable()
    const normals: Array<{ n: number; kind: string; result: Promise<TransformResult> }> = []
    const hostiles: Array<{ kind: keyof typeof HOSTILE; result: Promise<TransformResult> }> = []
    const kinds = Object.keys(HOSTILE) as Array<keyof typeof HOSTILE>
    for (let n = 0; n < 500; n++) {
      const kind = `k${n % 3}` // three webhooks
      normals.push({ n, kind, result: sandbox.run(`normal:${kind}`, NORMAL, request({ n }, { 'X-Kind': kind })) })
      if (n % 50 === 25) {
        const hostile = kinds[((n - 25) / 50) % kinds.length]
        hostiles.push({
          kind: hostile,
          result: sandbox.run(`hostile:${hostile}:${n}`, HOSTILE[hostile].source, request({ n })),
        })
      }
      if (n % 20 === 19) await sleep(5) // calls keep arriving while the hostile ones run
    }
    const results = await Promise.all(normals.map((c) => c.result))
    const wrong = normals.filter((c, i) => JSON.stringify(results[i]) !== JSON.stringify(expected(c.kind, c.n)))
    t.strictSame(
      wrong.map((c) => c.n),
      [],
      'every normal call got its own value',
    )
    t.strictSame(results[499], expected('k1', 499))
    const codes = await Promise.all(hostiles.map(async (h) => [h.kind, codeOf(await h.result)]))
    t.equal(codes.length, 10)
    t.strictSame(
      codes,
      hostiles.map((h) => [h.kind, HOSTILE[h.kind].code]),
      'every hostile call got its code',
    )
    delay.disable()
    t.ok(delay.max / 1e6 < 250, `the host event loop was never held (max delay ${Math.round(delay.max / 1e6)} ms)`)
  },
)

t.test('while one isolate is stuck in a loop the other keeps answering', async (t) => {
  // A one-second CPU limit: room for ten calls on a loaded machine before the loop is stopped.
  const sandbox = createSandbox({ ...LIMITS, cpuTimeMs: 1000, wallTimeMs: 2000 }, { isolates: 2 })
  t.teardown(() => sandbox.close())
  await sandbox.run('warm', NORMAL, request({ n: 0 }, { 'X-Kind': 'w' }))
  let loopDoneAt = 0
  const loop = sandbox.run('loop', HOSTILE.loop.source, request({})).then((r) => {
    loopDoneAt = performance.now()
    return r
  })
  const answeredAt: number[] = []
  for (let n = 1; n <= 10; n++) {
    t.strictSame(await sandbox.run('warm', NORMAL, request({ n }, { 'X-Kind': 'w' })), expected('w', n))
    answeredAt.push(performance.now())
  }
  t.equal(codeOf(await loop), 'TRANSFORM_TIMEOUT')
  t.ok(
    answeredAt.every((at) => at < loopDoneAt),
    'ten calls answered one after another before the loop was stopped',
  )
})

t.test(
  'calls on probation hold at most all isolates but one: a proven transform is answered while new loops wait',
  async (t) => {
    const sandbox = createSandbox({ ...LIMITS, cpuTimeMs: 1000, wallTimeMs: 2000 }, { isolates: 3 })
    t.teardown(() => sandbox.close())
    await sandbox.run('proven', NORMAL, request({ n: 0 }, { 'X-Kind': 'p' }))
    const loops = Array.from({ length: 4 }, (_, i) =>
      sandbox
        .run(`new-loop-${i}`, HOSTILE.loop.source, request({}), { probation: true })
        .then((r) => [performance.now(), codeOf(r)] as const),
    )
    await sleep(50) // the loops have taken what probation may take: two of the three isolates
    const answered: number[] = []
    for (let n = 1; n <= 5; n++) {
      t.strictSame(await sandbox.run('proven', NORMAL, request({ n }, { 'X-Kind': 'p' })), expected('p', n))
      answered.push(performance.now())
    }
    const stopped = await Promise.all(loops)
    t.strictSame(
      stopped.map(([, code]) => code),
      Array(4).fill('TRANSFORM_TIMEOUT'),
      'every loop still ran and was stopped',
    )
    const firstStop = Math.min(...stopped.map(([at]) => at))
    t.ok(
      answered.every((at) => at < firstStop),
      'the proven transform was answered five times before any loop was stopped',
    )
  },
)

t.test('with a single isolate, calls on probation still run', async (t) => {
  const sandbox = createSandbox(LIMITS, { isolates: 1 })
  t.teardown(() => sandbox.close())
  t.strictSame(
    await sandbox.run('new', NORMAL, request({ n: 3 }, { 'X-Kind': 'n' }), { probation: true }),
    expected('n', 3),
  )
})

/** One transform, many calls queued at once on one isolate, so they run as batches. */
async function batchOf(source: string, bad: Record<number, string>, limits = LIMITS, count = 24) {
  const sandbox = createSandbox(limits, { isolates: 1 })
  const results = await Promise.all(
    Array.from({ length: count }, (_, n) =>
      sandbox.run('one-webhook', source, request({ n, bad: bad[n] ?? null }, { 'X-Kind': 'b' })),
    ),
  )
  await sandbox.close()
  return results.map(codeOf)
}
const calls = (count: number, overrides: Record<number, string>) =>
  Array.from({ length: count }, (_, n) => overrides[n] ?? 'ok')

t.test('in a batch, only the call that loops is stopped; the calls before and after it succeed', async (t) => {
  const source = `function transform(evt) { if (evt.bad) while (true) {} return { name: 'b/ok', data: evt.n } }`
  t.strictSame(
    await batchOf(source, { 5: 'loop', 17: 'loop' }),
    calls(24, { 5: 'TRANSFORM_TIMEOUT', 17: 'TRANSFORM_TIMEOUT' }),
  )
})

t.test(
  'in a batch, only the call that exhausts the heap is charged; the others re-run alone and succeed',
  async (t) => {
    const source = `function transform(evt) { const a = []; if (evt.bad) while (true) a.push(new Array(1e6).fill(1)); return { name: 'b/ok', data: evt.n } }`
    t.strictSame(await batchOf(source, { 9: 'bomb' }, ROOMY_LIMITS), calls(24, { 9: 'TRANSFORM_MEMORY' }))
  },
)

t.test('in a batch, a failed ArrayBuffer allocation is charged to its call only', async (t) => {
  const source = `function transform(evt) { const a = []; if (evt.bad) while (true) a.push(new Float64Array(4 * 1024 * 1024)); return { name: 'b/ok', data: evt.n } }`
  t.strictSame(
    await batchOf(source, { 4: 'bomb', 20: 'bomb' }, ROOMY_LIMITS),
    calls(24, { 4: 'TRANSFORM_MEMORY', 20: 'TRANSFORM_MEMORY' }),
  )
})

t.test('in a batch of async calls, only the one whose promise never settles times out at the deadline', async (t) => {
  const source = `async function transform(evt) { await null; if (evt.bad) await new Promise(() => {}); return { name: 'b/ok', data: evt.n } }`
  t.strictSame(await batchOf(source, { 3: 'never' }), calls(24, { 3: 'TRANSFORM_TIMEOUT' }))
})

t.test(
  'in a batch of async calls, a loop after an await is traced to its call by re-running the batch one by one',
  async (t) => {
    const source = `async function transform(evt) { await null; if (evt.bad) while (true) {} return { name: 'b/ok', data: evt.n } }`
    t.strictSame(await batchOf(source, { 12: 'loop' }), calls(24, { 12: 'TRANSFORM_TIMEOUT' }))
  },
)

t.test(
  'a transform is compiled once per sourceKey and its context reused; a new source or eviction starts afresh',
  async (t) => {
    const sandbox = createSandbox(LIMITS, { isolates: 1, cacheEntries: 2 })
    t.teardown(() => sandbox.close())
    const counter = (tag: string) =>
      `let calls = 0; function transform() { calls++; return { name: '${tag}', data: calls } }`
    const resultOf = async (key: string, source: string) => {
      const r = await sandbox.run(key, source, request({}))
      return r.kind === 'ok' ? r.value : r
    }
    t.strictSame(
      [await resultOf('a', counter('a')), await resultOf('a', counter('a')), await resultOf('a', counter('a'))],
      [
        { name: 'a', data: 1 },
        { name: 'a', data: 2 },
        { name: 'a', data: 3 },
      ],
      'the same context serves every call',
    )
    t.strictSame(
      await resultOf('a', counter('a2')),
      { name: 'a2', data: 1 },
      'a changed source under the same key is compiled again',
    )
    await resultOf('b', counter('b'))
    await resultOf('c', counter('c')) // the cache holds two: `a` was least recently used
    t.strictSame(await resultOf('a', counter('a2')), { name: 'a2', data: 1 }, 'an evicted transform is compiled again')
    t.strictSame(await resultOf('c', counter('c')), { name: 'c', data: 2 }, 'a cached one is not')
  },
)

t.test('after close, calls are refused, and calls still waiting are rejected', async (t) => {
  const sandbox = createSandbox(LIMITS, { isolates: 1 })
  const running = sandbox.run('slow', HOSTILE.never.source, request({}))
  const waiting = sandbox.run('slow', NORMAL, request({ n: 1 }, { 'X-Kind': 'x' }))
  await sleep(20)
  await sandbox.close()
  await t.rejects(waiting, /closed/)
  await t.rejects(running, /closed/)
  await t.rejects(sandbox.run('late', NORMAL, request({ n: 1 })), /closed/)
})
