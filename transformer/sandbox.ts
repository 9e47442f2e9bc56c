// The webhook-transform sandbox: user JavaScript in isolated-vm isolates, each with its own V8
// heap and thread. Only what V8 provides, minus WebAssembly: no require, process, fetch, Node
// APIs or timers, not even queueMicrotask; promises work and settle within the same timed run.
// - Only strings cross: the host JSON-encodes the input, HARNESS (below, in the isolate) parses
//   it, calls `transform` and JSON-encodes the result. Host code never touches a user object,
//   getter or proxy, and it beat ExternalCopy of objects (bench/transform/transport.ts).
// - Calls waiting for the same transform go to an isolate as one batch: one thread hop for
//   many calls. A slot (isolate) runs one batch at a time, so whatever kills a run is that
//   batch's doing; where the culprit inside it is unclear, its calls run again, alone.
// - Fair share: transforms take turns, and a free slot goes to a transform that runs nowhere
//   else before one that already has a slot, so a slow or hostile transform holds at most one
//   isolate while others wait; with nobody else waiting it may use them all. Calls on probation
//   (a transform not yet proven, or whose last call hit a limit) hold at most all isolates but
//   one: a burst of new hostile transforms cannot take every isolate from the proven ones.
// - CPU: a batch's synchronous run (microtasks included) gets isolated-vm's `timeout` of
//   cpuTimeMs + sliceMs and the harness starts no call after sliceMs, so each call has at least
//   cpuTimeMs. That is wall time of the isolate thread running JS, never less than its CPU time,
//   but a saturated host may deschedule a call: a stopped call runs once more, alone, before it
//   is a TIMEOUT. (`isolate.cpuTime` is no help: in isolated-vm 7 it is steady-clock time.)
// - Wall: a host timer of wallTimeMs per batch covers promises that never settle; the calls
//   still pending are TIMEOUT and the isolate is disposed, the only way to free them.
// - Memory: `memoryLimit` per isolate, shared by all its contexts. When V8 hits it isolated-vm
//   disposes the isolate (rebuilt on the next batch, transforms compiled again) and the calls
//   it killed run again, alone, on a fresh one: a call that dies there too is a MEMORY error.
import ivm from 'isolated-vm'
import { SANDBOX_ERROR_CODES } from '../core/errors.ts'
import type {
  RunOptions,
  Sandbox,
  SandboxLimits,
  TransformErrorCode,
  TransformInput,
  TransformResult,
} from './sandbox-types.ts'

export interface SandboxOptions {
  /** Transforms run in parallel (SLUICE_TRANSFORM_ISOLATES, SLUICE_TRANSFORM_SLOW_ISOLATES). */
  isolates: number
  cacheEntries?: number
}

const MAX_BATCH_CALLS = 32
/** Bodies are copied whole into the isolate: batching must not multiply a big one past its heap. */
const MAX_BATCH_INPUT_CHARS = 256 * 1024
/** Measured: a context with a small transform holds ~160 KB; cached ones may fill ¼ of the heap limit. */
const CONTEXT_KB = 160
const CACHE_HEAP_SHARE = 0.25
const COLLECT_MS = 50 // for reading a stopped batch's finished calls, before they are given up
const CODES = new Set<string>(SANDBOX_ERROR_CODES)

// Runs in each context before the user's source, so it holds the real JSON, Date.now and eval
// even if that source replaces them. Fragments per call: [1, value] ok ([1] for undefined),
// [2, code, message] error, 0 not started, 3 running when stopped, 4 awaiting a promise.
// Tampering with prototypes can only spoil the tamperer's own fragments, which the host
// validates; still, the harness avoids prototype lookups where it can.
const HARNESS = String.raw`(function () {
  'use strict'
  const parse = JSON.parse, stringify = JSON.stringify, now = Date.now, toText = String, globalEval = eval, NativePromise = Promise
  const NativeError = Error
  const adopt = async (value) => value
  delete globalThis.WebAssembly
  // No shared memory, so nothing to wait on: Atomics.wait would only block the isolate's thread
  // until the CPU stop and be misreported as a CPU-limit kill. A transform that tries is told why.
  delete globalThis.SharedArrayBuffer
  const noWaiting = function () { throw new TypeError('Atomics.wait: a transform has no shared memory and must not block') }
  Object.defineProperty(Atomics, 'wait', { value: noWaiting, writable: true, configurable: true })
  Object.defineProperty(Atomics, 'waitAsync', { value: noWaiting, writable: true, configurable: true })
  const fail = (code, message) => '[2,' + stringify(code) + ',' + stringify(message) + ']'
  // An Error as "Name: message"; anything else thrown (a plain object, a string) as what it is.
  function describe(e) {
    if (e instanceof NativeError) return toText(e.name) + ': ' + toText(e.message)
    if (typeof e === 'function') return 'threw a function'
    if (e !== null && typeof e === 'object') return 'threw ' + (stringify(e) ?? toText(e))
    return 'threw ' + toText(e)
  }
  function thrown(e) {
    let text
    try { text = describe(e) } catch { text = 'threw a value that cannot be printed' }
    if (text.length > 2000) text = text.slice(0, 2000) + '…'
    return fail(text === 'RangeError: Array buffer allocation failed' ? 'TRANSFORM_MEMORY' : 'TRANSFORM_THREW', text)
  }
  function utf8Bytes(s) {
    let n = 0
    for (let i = 0; i < s.length; i++) { const c = s.charCodeAt(i); n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xdc00 ? (i++, 4) : 3 }
    return n
  }
  function runner(transform, sliceMs, maxBytes) {
    let batch = null // the batch in flight, for run(null) after the host stopped it
    function encode(v) {
      const type = typeof v
      if (type === 'function' || type === 'symbol') return fail('TRANSFORM_THREW', 'transform returned a ' + type + ': return a JSON object {name, data, id?, ts?}')
      const s = stringify(v)
      if (s === undefined) return '[1]'
      // s.length (UTF-16 units) cannot be faked; a tampered charCodeAt can undercount at most 3×.
      if (s.length > maxBytes || (s.length * 3 > maxBytes && utf8Bytes(s) > maxBytes)) return fail('TRANSFORM_OUTPUT_TOO_LARGE', 'transform output is over ' + maxBytes + ' bytes of JSON')
      return '[1,' + s + ']'
    }
    function finish(b) {
      let s = '['
      for (let k = 0; k < b.n; k++) s += (k === 0 ? '' : ',') + (b.out[k] === undefined ? '0' : b.out[k])
      return s + ']'
    }
    function settle(b, k, value, rejected) {
      if (b.out[k] !== 4) return
      try { b.out[k] = rejected ? thrown(value) : encode(value) } catch (e) { b.out[k] = thrown(e) }
      if (--b.waiting === 0 && b.done !== null) { batch = null; b.done(finish(b)) }
    }
    return function run(input) {
      if (input === null) return batch === null ? '[]' : finish(batch)
      const jobs = parse(input), started = now()
      const b = { n: jobs.length, out: { __proto__: null }, waiting: 0, done: null } // no prototype: no inherited index setters
      batch = b
      for (let k = 0; k < b.n; k++) {
        if (k > 0 && now() - started > sliceMs) break
        const job = jobs[k]
        b.out[k] = 3
        try {
          const r = transform(job.b, job.h, job.q, job.r)
          if (r !== null && (typeof r === 'object' || typeof r === 'function') && typeof r.then === 'function') {
            adopt(r).then((v) => settle(b, k, v, false), (e) => settle(b, k, e, true))
            b.out[k] = 4
            b.waiting++
          } else b.out[k] = encode(r)
        } catch (e) { b.out[k] = thrown(e) }
      }
      if (b.waiting === 0) { batch = null; return finish(b) }
      return new NativePromise((resolve) => { b.done = resolve })
    }
  }
  return function load(source, sliceMs, maxBytes) {
    let transform // indirect eval: global code, and the appended expression sees a top-level const/let too
    try { transform = globalEval(source + '\n;typeof transform === "function" ? transform : undefined') } catch (e) { return thrown(e) }
    if (typeof transform !== 'function') return fail('TRANSFORM_NOT_A_FUNCTION', 'the source defines no function transform(evt, headers, queryParams, raw)')
    return runner(transform, sliceMs, maxBytes)
  }
})()`

interface Job {
  key: string
  source: string
  json: string
  alone: boolean
  retried: boolean
  probation: boolean
  signal?: AbortSignal
  onStart?: () => void
  resolve(result: TransformResult): void
  reject(err: Error): void
}
type Runner = ivm.Reference<(batch: string | null) => string | Promise<string>>
/** A cached transform: its context and runner, or the deterministic failure of its source. */
interface Compiled {
  source: string
  context?: ivm.Context
  runner?: Runner
  failure?: TransformResult
}
interface Slot {
  isolate?: ivm.Isolate
  harness?: ivm.Script
  cache: Map<string, Compiled>
  busy: boolean
}
type Outcome = { value: unknown } | { error: unknown } | typeof DEADLINE

const DEADLINE = Symbol('deadline')
const failure = (code: TransformErrorCode, message: string): TransformResult => ({ kind: 'error', code, message })
const messageOf = (err: unknown) =>
  typeof err === 'object' && err !== null && 'message' in err ? String(err.message) : String(err)
const PROTOCOL = failure('TRANSFORM_THREW', 'the transform broke the sandbox protocol')
const abandoned = failure('TRANSFORM_TIMEOUT', 'the caller gave up waiting for the transform')

/** A harness fragment as a result ([1, value] ok, [2, code, message] error), or undefined for the others. */
function resultOf(part: unknown): TransformResult | undefined {
  if (Array.isArray(part) && part[0] === 1) return { kind: 'ok', value: part[1] }
  if (Array.isArray(part) && part[0] === 2 && CODES.has(part[1])) return failure(part[1], String(part[2]))
}

/** Settles with the work's outcome, or DEADLINE after `ms`; a late rejection is still handled. */
function within(ms: number, work: Promise<unknown>): Promise<Outcome> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(DEADLINE), ms)
    work.then(
      (value) => {
        clearTimeout(timer)
        resolve({ value })
      },
      (error) => {
        clearTimeout(timer)
        resolve({ error })
      },
    )
  })
}

export function createSandbox(limits: SandboxLimits, opts: SandboxOptions): Sandbox {
  const sliceMs = Math.max(1, Math.min(10, limits.cpuTimeMs / 10))
  const syncTimeoutMs = Math.ceil(limits.cpuTimeMs + sliceMs)
  const cacheEntries =
    opts.cacheEntries ?? Math.max(4, Math.floor((limits.isolateMemoryMb * 1024 * CACHE_HEAP_SHARE) / CONTEXT_KB))
  const slots: Slot[] = Array.from({ length: Math.max(1, opts.isolates) }, () => ({
    cache: new Map(),
    busy: false,
  }))
  const pending = new Map<string, Job[]>() // waiting calls per sourceKey; keys take turns in Map order
  const running = new Map<string, number>() // batches in flight per sourceKey
  // Isolates running calls on probation: at most all but one, so a hostile new transform cannot
  // take every isolate from the proven ones (with a single isolate there is nothing to keep).
  let onProbation = 0
  const probationFull = () => slots.length > 1 && onProbation >= slots.length - 1
  let closed = false

  function enqueue(all: Job[], front: boolean): void {
    const jobs = all.filter((job) => !job.signal?.aborted || void job.resolve(abandoned))
    if (jobs.length === 0) return
    const queue = pending.get(jobs[0].key)
    if (!queue) pending.set(jobs[0].key, jobs)
    else queue.splice(front ? 0 : queue.length, 0, ...jobs)
  }

  function takeBatch(): Job[] | undefined {
    let key: string | undefined
    for (const [waiting, queue] of pending) {
      if (queue[0]?.probation && probationFull()) continue
      key ??= waiting
      if (!running.has(waiting)) {
        key = waiting
        break
      }
    }
    if (key === undefined) return undefined
    const queue = pending.get(key)!
    // Copies re-queued after a stop are not what an abort listener knows: given-up calls leave here.
    while (queue.length > 0 && queue[0].signal?.aborted) queue.shift()!.resolve(abandoned)
    if (queue.length === 0) {
      pending.delete(key)
      return takeBatch()
    }
    let n = 1
    let chars = queue[0].json.length
    while (
      !queue[0].alone &&
      n < queue.length &&
      n < MAX_BATCH_CALLS &&
      !queue[n].alone &&
      queue[n].probation === queue[0].probation
    ) {
      chars += queue[n].json.length
      if (chars > MAX_BATCH_INPUT_CHARS) break
      n++
    }
    pending.delete(key) // re-added at the back: keys take turns
    if (queue.length > n) pending.set(key, queue)
    return queue.splice(0, n)
  }

  function pump(): void {
    for (const slot of slots.filter((s) => !s.busy)) {
      const batch = takeBatch()
      if (!batch) return
      const key = batch[0].key
      const probation = batch[0].probation
      slot.busy = true
      running.set(key, (running.get(key) ?? 0) + 1)
      if (probation) onProbation++
      runBatch(slot, batch)
        .catch((err: Error) => batch.forEach((job) => job.reject(err)))
        .finally(() => {
          slot.busy = false
          if (probation) onProbation--
          const left = running.get(key)! - 1
          if (left === 0) running.delete(key)
          else running.set(key, left)
          if (!closed) pump()
        })
    }
  }

  function evict(slot: Slot, key: string): void {
    const entry = slot.cache.get(key)
    if (slot.cache.delete(key)) {
      entry?.runner?.release()
      entry?.context?.release()
    }
  }
  function reset(slot: Slot): void {
    if (slot.isolate && !slot.isolate.isDisposed) slot.isolate.dispose()
    slot.isolate = slot.harness = undefined
    slot.cache.clear() // its references died with the isolate
  }
  function remember(slot: Slot, key: string, entry: Compiled): Compiled {
    slot.cache.set(key, entry)
    for (const oldest of slot.cache.keys()) {
      if (slot.cache.size <= cacheEntries) break
      evict(slot, oldest)
    }
    return entry
  }

  /** Isolate-level failures: the isolate is gone (memory) or the run was stopped (timeout). */
  function runFailure(slot: Slot, err: unknown): TransformResult {
    const message = messageOf(err)
    if (slot.isolate?.isDisposed || /disposed|memory limit|allocation failed/i.test(message)) {
      reset(slot)
      return failure('TRANSFORM_MEMORY', `transform exceeded the ${limits.isolateMemoryMb} MB memory limit`)
    }
    if (/timed out/i.test(message))
      return failure('TRANSFORM_TIMEOUT', `transform exceeded the ${limits.cpuTimeMs} ms CPU limit`)
    return failure('TRANSFORM_THREW', message)
  }

  async function compiledFor(slot: Slot, key: string, source: string): Promise<Compiled> {
    const hit = slot.cache.get(key)
    if (hit?.source === source) {
      slot.cache.delete(key)
      return remember(slot, key, hit)
    } // most recently used goes last
    if (hit) evict(slot, key)
    slot.isolate ??= new ivm.Isolate({ memoryLimit: limits.isolateMemoryMb })
    const isolate = slot.isolate
    let context: ivm.Context | undefined
    try {
      // Syntax on its own first, so a SyntaxError thrown at run time is never called a compile error.
      const syntaxError = await isolate
        .compileScript(source, { filename: `transform:${key}` })
        .then((script) => script.release(), messageOf)
      if (syntaxError !== undefined && !isolate.isDisposed)
        return remember(slot, key, { source, failure: failure('TRANSFORM_COMPILE', syntaxError) })
      slot.harness ??= await isolate.compileScript(HARNESS, { filename: 'sluice:harness' })
      context = await isolate.createContext()
      const load = (await slot.harness.run(context, { reference: true })) as ivm.Reference
      const loaded = await load.apply(undefined, [source, sliceMs, limits.maxOutputBytes], {
        timeout: syncTimeoutMs,
        result: { reference: true },
      })
      load.release()
      if (loaded.typeof === 'function') return remember(slot, key, { source, context, runner: loaded as Runner })
      const result = resultOf(JSON.parse(loaded.typeof === 'string' ? String(await loaded.copy()) : 'null'))
      context.release()
      // Top-level code has no input, so it fails the same way every time; against a limit it may not.
      return result?.kind === 'error' && result.code !== 'TRANSFORM_MEMORY'
        ? remember(slot, key, { source, failure: result })
        : { source, failure: result ?? PROTOCOL }
    } catch (err) {
      if (!isolate.isDisposed) context?.release()
      return { source, failure: runFailure(slot, err) }
    }
  }

  async function runBatch(slot: Slot, jobs: Job[]): Promise<void> {
    const { key, source } = jobs[0]
    const compiled = await compiledFor(slot, key, source)
    if (closed) throw new Error('sandbox: closed')
    if (!compiled.runner) return failAll(jobs, compiled.failure!)
    const input = `[${jobs.map((job) => job.json).join(',')}]`
    for (const job of jobs) job.onStart?.()
    const outcome = await within(
      limits.wallTimeMs,
      compiled.runner.apply(undefined, [input], { timeout: syncTimeoutMs, result: { promise: true } }),
    )
    if (closed) throw new Error('sandbox: closed')
    if (outcome !== DEADLINE && 'value' in outcome) return settle(slot, jobs, outcome.value, 'done')
    if (outcome === DEADLINE) return settle(slot, jobs, await collect(compiled.runner), 'deadline', true)
    const stopped = runFailure(slot, outcome.error)
    if (stopped.kind === 'error' && stopped.code === 'TRANSFORM_TIMEOUT') {
      const partial = await collect(compiled.runner)
      evict(slot, key) // its globals may be half-updated: the next call starts from a fresh context
      return settle(slot, jobs, partial, 'timeout')
    }
    failAll(jobs, stopped)
  }

  function failAll(jobs: Job[], result: TransformResult): void {
    // A dead isolate: in a batch the culprit is unknown, and a lone call may have died of what
    // other transforms left in the isolate. A second run, alone on a fresh isolate, decides.
    const retry = result.kind === 'error' && result.code === 'TRANSFORM_MEMORY'
    for (const job of jobs) if (!retry || job.retried) job.resolve(result)
    const again = jobs.filter((job) => retry && !job.retried)
    if (again.length > 0)
      enqueue(
        again.map((job) => ({ ...job, alone: true, retried: true })),
        true,
      )
  }

  /** The fragments of a batch the host stopped: run(null) reads them from the harness. */
  async function collect(runner: Runner): Promise<unknown> {
    const outcome = await within(COLLECT_MS, runner.apply(undefined, [null], { timeout: COLLECT_MS }))
    return outcome !== DEADLINE && 'value' in outcome ? outcome.value : undefined
  }

  /** Turns the harness's fragments into results; calls not started, or ambiguous, go back in the queue. */
  function settle(
    slot: Slot,
    jobs: Job[],
    text: unknown,
    stop: 'done' | 'deadline' | 'timeout',
    resetAfter = false,
  ): void {
    let parts: unknown
    try {
      parts = JSON.parse(typeof text === 'string' ? text : 'null')
    } catch {
      parts = null
    }
    const fragments: unknown[] = Array.isArray(parts) && parts.length === jobs.length ? parts : []
    const again: Job[] = []
    jobs.forEach((job, k) => {
      const part = fragments[k]
      const result = resultOf(part)
      if (result) {
        const memory = result.kind === 'error' && result.code === 'TRANSFORM_MEMORY' // an ArrayBuffer refused: memory is shared, as above
        resetAfter ||= memory
        return memory && !job.retried ? again.push({ ...job, alone: true, retried: true }) : job.resolve(result)
      }
      if (part === 0 && k > 0) return again.push(job)
      if (stop === 'done' || part === 0) return job.resolve(PROTOCOL)
      if (stop === 'deadline')
        return job.resolve(failure('TRANSFORM_TIMEOUT', `transform did not finish within ${limits.wallTimeMs} ms`))
      // After a CPU stop in microtasks it is unknown which awaiting call ran: they re-run alone.
      if (part !== 3 && jobs.length > 1) return again.push({ ...job, alone: true })
      // The stop is wall time: a call descheduled on a saturated host gets a second run, alone.
      if (!job.retried) return again.push({ ...job, alone: true, retried: true })
      job.resolve(failure('TRANSFORM_TIMEOUT', `transform exceeded the ${limits.cpuTimeMs} ms CPU limit`))
    })
    if (resetAfter) reset(slot)
    if (again.length > 0) enqueue(again, true)
  }

  return {
    async run(sourceKey: string, source: string, input: TransformInput, options: RunOptions = {}) {
      const { signal, onStart, probation = false } = options
      if (closed) throw new Error('sandbox: closed')
      // Throws (rejects) if the input is not JSON: a bug upstream, not the transform's doing.
      const json = JSON.stringify({ b: input.body, h: input.headers ?? {}, q: input.query ?? {}, r: input.raw })
      return new Promise((resolve, reject) => {
        const job: Job = {
          key: sourceKey,
          source,
          json,
          alone: false,
          retried: false,
          probation,
          signal,
          onStart,
          resolve,
          reject,
        }
        // A call given up on before it started leaves the queue at once; a running one is left to its stop.
        signal?.addEventListener(
          'abort',
          () => {
            const queue = pending.get(sourceKey)
            const at = queue?.indexOf(job) ?? -1
            if (at < 0) return
            queue!.splice(at, 1)
            if (queue!.length === 0) pending.delete(sourceKey)
            resolve(abandoned)
          },
          { once: true },
        )
        enqueue([job], false)
        pump()
      })
    },
    async close(): Promise<void> {
      closed = true
      for (const queue of pending.values()) for (const job of queue) job.reject(new Error('sandbox: closed'))
      pending.clear()
      for (const slot of slots) reset(slot)
    },
  }
}
