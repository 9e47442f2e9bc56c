// bench/transform: warm transforms per second through the Sandbox, with 1 and 2 isolates, for a
// GitHub push (~7 KB of JSON, the transform passing it on as data) and a Stripe event (~300 B),
// and the latency a call adds. Then the same transform on bare isolated-vm with each way of
// crossing the boundary (bench/transform/transport.ts). Target: ≥ 50k small transforms/s per core.
// Usage: node --no-node-snapshot bench/transform/run.ts [seconds per case]
import { cpus, loadavg } from 'node:os'
import { createSandbox } from '../../transformer/sandbox.ts'
import type { TransformInput } from '../../transformer/sandbox-types.ts'
import { githubHeaders, githubPush, request, stripeInvoicePaid } from '../../tests/transformer/payloads.ts'
import { report } from '../lib.ts'
import { latency, throughput } from './measure.ts'
import { MEMORY_MB, MODES, measureTransport } from './transport.ts'

const seconds = Number(process.argv[2] ?? 3)
const LIMITS = { cpuTimeMs: 100, wallTimeMs: 1000, isolateMemoryMb: 32, maxOutputBytes: 1024 * 1024 }

interface Workload {
  payload: string
  input: TransformInput
  source: string
  check(value: unknown): boolean
}
const workloads: Workload[] = [
  {
    payload: 'stripe event',
    input: request(
      stripeInvoicePaid,
      {
        'Content-Type': 'application/json',
        'Stripe-Signature': 't=1724668530,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
      },
      {},
      true,
    ),
    source: `function transform(evt) { return { name: 'stripe/' + evt.type, id: evt.id, ts: evt.created * 1000, data: evt.data.object } }`,
    check: (v) => (v as { id?: string }).id === stripeInvoicePaid.id,
  },
  {
    payload: 'github push',
    input: request(githubPush, githubHeaders('push', '72d3162e-cc78-11e3-81ab-4c9367dc0958')),
    source: `function transform(evt, headers) { return { name: 'github/' + headers['X-Github-Event'], id: headers['X-Github-Delivery'], data: evt } }`,
    check: (v) => (v as { data?: { after?: string } }).data?.after === githubPush.after,
  },
]

const rows: Array<Record<string, string | number>> = []
for (const w of workloads) {
  const bytes = Buffer.byteLength(w.input.raw)
  for (const isolates of [1, 2]) {
    const sandbox = createSandbox(LIMITS, { isolates })
    const failures = new Map<string, number>() // counted, not fatal: a saturated box can stop a call
    const call = async () => {
      const r = await sandbox.run('bench', w.source, w.input)
      const what = r.kind === 'error' ? r.code : w.check(r.value) ? undefined : 'WRONG_VALUE'
      if (what) failures.set(what, (failures.get(what) ?? 0) + 1)
    }
    await throughput(call, 256, 1) // warm-up: compile, JIT
    const added = await latency(call, 2000)
    const load = await throughput(call, 256, seconds)
    rows.push({
      case: `sandbox, ${isolates} isolate${isolates > 1 ? 's' : ''}`,
      payload: `${w.payload} (${bytes} B)`,
      'calls/s': load.callsPerSec,
      'calls/cpu-s': load.callsPerCpuSec,
      'p50 ms': added.p50Ms,
      'p99 ms': added.p99Ms,
      'loaded p50 ms': load.loadedP50Ms,
      'loaded p99 ms': load.loadedP99Ms,
      failures: [...failures].map(([code, n]) => `${code}×${n}`).join(' ') || 0,
    })
    await sandbox.close()
  }
  for (const mode of MODES) {
    const load = await measureTransport(mode, w.source, w.input, seconds)
    const base = {
      case: `bare ivm ${MEMORY_MB} MB, ${mode}`,
      payload: `${w.payload} (${bytes} B)`,
      'p50 ms': '-',
      'p99 ms': '-',
    }
    if ('failed' in load)
      rows.push({
        ...base,
        'calls/s': '-',
        'calls/cpu-s': '-',
        'loaded p50 ms': '-',
        'loaded p99 ms': '-',
        failures: load.failed,
      })
    else
      rows.push({
        ...base,
        'calls/s': load.callsPerSec,
        'calls/cpu-s': load.callsPerCpuSec,
        'loaded p50 ms': load.loadedP50Ms,
        'loaded p99 ms': load.loadedP99Ms,
        failures: 0,
      })
  }
}

report('transform', rows, {
  cores: cpus().length,
  loadAvg1m: Number(loadavg()[0].toFixed(2)),
  secondsPerCase: seconds,
  window: 256,
})
