// How input and output cross into an isolate, measured on bare isolated-vm with the same
// transform, so the sandbox's choice (JSON text both ways, batched) rests on numbers:
// - objects: ExternalCopy of the arguments in, of the result out (structured clone);
// - json: the input as one JSON string parsed inside, the result stringified inside and parsed outside;
// - json batch: as json, up to BATCH calls per isolate call (what the sandbox does under load).
import ivm from 'isolated-vm'
import type { TransformInput } from '../../transformer/sandbox-types.ts'
import { throughput, type Throughput } from './measure.ts'

const BATCH = 32
/**
 * Not the sandbox's 32 MB: with 256 calls queued on one isolate, the per-call modes die of
 * that limit on 7 KB payloads (each argument string over 1 KB becomes an external string that
 * counts against the limit until V8 collects it). The sandbox runs one batch per isolate.
 */
export const MEMORY_MB = 128
type Mode = 'objects' | 'json' | 'json batch'
export const MODES: Mode[] = ['objects', 'json', 'json batch']

/** A transport that fails under load (e.g. hits the isolate's memory limit) is reported, not fatal. */
export async function measureTransport(
  mode: Mode,
  source: string,
  input: TransformInput,
  seconds: number,
): Promise<Throughput | { failed: string }> {
  const isolate = new ivm.Isolate({ memoryLimit: MEMORY_MB })
  try {
    const context = await isolate.createContext()
    const fn = (await context.eval(
      `(function () { ${source}
      const parse = JSON.parse, stringify = JSON.stringify
      return {
        objects: transform,
        json: (text) => { const i = parse(text); return stringify(transform(i.b, i.h, i.q, i.r)) },
        batch: (text) => { const jobs = parse(text); let out = '['; for (let k = 0; k < jobs.length; k++) { const i = jobs[k]; out += (k ? ',' : '') + stringify(transform(i.b, i.h, i.q, i.r)) } return out + ']' },
      }[${JSON.stringify(mode === 'json batch' ? 'batch' : mode)}]
    })()`,
      { reference: true },
    )) as ivm.Reference
    const encode = () => JSON.stringify({ b: input.body, h: input.headers, q: input.query, r: input.raw })
    if (mode === 'objects') {
      return await throughput(
        () =>
          fn.apply(undefined, [input.body, input.headers, input.query, input.raw], {
            arguments: { copy: true },
            result: { copy: true },
            timeout: 100,
          }),
        256,
        seconds,
      )
    }
    if (mode === 'json') {
      return await throughput(
        async () => JSON.parse((await fn.apply(undefined, [encode()], { timeout: 100 })) as string),
        256,
        seconds,
      )
    }
    // Batches are formed the way the sandbox forms them: calls that arrive while one is in flight.
    let waiting: Array<{ text: string; resolve(v: unknown): void }> = []
    let busy = false
    const flush = async () => {
      if (busy || waiting.length === 0) return
      busy = true
      const jobs = waiting.splice(0, BATCH)
      const out = JSON.parse(
        (await fn.apply(undefined, [`[${jobs.map((j) => j.text).join(',')}]`], { timeout: 100 })) as string,
      )
      jobs.forEach((job, k) => job.resolve(out[k]))
      busy = false
      void flush()
    }
    const result = await throughput(
      () =>
        new Promise((resolve) => {
          waiting.push({ text: encode(), resolve })
          void flush()
        }),
      256,
      seconds,
    )
    waiting = []
    return result
  } catch (err) {
    return { failed: (err as Error).message }
  } finally {
    if (!isolate.isDisposed) isolate.dispose()
  }
}
