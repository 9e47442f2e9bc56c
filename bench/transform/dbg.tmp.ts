import { createSandbox } from '../../transformer/sandbox.ts'
import { setTimeout as sleep } from 'node:timers/promises'
const LIMITS = { cpuTimeMs: 100, wallTimeMs: 1000, isolateMemoryMb: 32, maxOutputBytes: 1 << 20 }
const NORMAL = `function transform(evt, headers) { return { name: 'calc/' + headers['X-Kind'], id: 'id-' + evt.n, data: { n: evt.n, double: evt.n * 2 } } }`
const bomb = 'function transform() { const a = []; while (true) a.push(new Float64Array(1e6)) }'
const sb = createSandbox(LIMITS)
const ps: Promise<unknown>[] = []
for (let n = 0; n < 1500; n++) {
  const kind = `k${n % 3}`
  ps.push(sb.run(`normal:${kind}`, NORMAL, { body: { n }, headers: { 'X-Kind': kind }, query: {}, raw: '' }))
  if (n % 50 === 25) { const t0 = performance.now(); ps.push(sb.run(`bomb:${n}`, bomb, { body: {}, headers: {}, query: {}, raw: '' }).then((r) => console.log('bomb', n, Math.round(performance.now() - t0), JSON.stringify(r)))) }
  if (n % 20 === 19) await sleep(5)
}
await Promise.all(ps); await sb.close()
