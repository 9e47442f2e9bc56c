// bench/serve: functions served by an app on npm inngest 4.x over HTTP (bench/serve/app.ts) against
// the same function in-process (bench/serve/functions.ts), each on one `sluice dev` process on
// loopback, alternating. Per mode: Sluice's own CPU per step call (/proc/<pid>/stat, utime+stime),
// step calls/s through the one runner, p50/p99 from accepted to the run's first call, peak RSS; and
// the app's own CPU per call, since it shares this machine's cores.
// A step call is one execution of the function: STEPS steps and the return make STEPS + 1 per run.
// Targets (issue 49): ≤ 150 µs of Sluice CPU per step call, ≥ 2,000 step calls/s, p50 < 20 ms.
// Usage: node --conditions=sluice-source bench/serve/run.ts [runs per round] [rounds]
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { peakRssMb, report, startChild, type Child } from '../lib.ts'

const RUNS = Number(process.argv[2] ?? 1_000)
const ROUNDS = Number(process.argv[3] ?? 2)
const STEPS = 10
const LATENCY_RUNS = 100
const CALLS_PER_RUN = STEPS + 1
const TICKS_PER_S = 100

const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S
}

async function post(url: string, events: unknown[]): Promise<number> {
  const res = await fetch(`${url}/e/bench`, { method: 'POST', body: JSON.stringify(events) })
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`)
  return Date.now()
}

/** The log's lines of `kind` ("first": a run's first call; "done": its return), by event n → ms. */
async function logged(log: string, kind: 'first' | 'done'): Promise<Map<number, number>> {
  const lines = (await readFile(log, 'utf8').catch(() => '')).split('\n').filter((l) => l.startsWith(`${kind} `))
  return new Map(lines.map((l) => l.split(' ').slice(1).map(Number) as [number, number]))
}
const completed = async (log: string) => (await logged(log, 'done')).size

async function round(mode: 'http' | 'in-process') {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-serve-'))
  const log = join(dir, 'first.log')
  const env = { SLUICE_BENCH_LOG: log, BENCH_STEPS: String(STEPS), SLUICE_LOG_LEVEL: 'warn' }
  const args = ['bin/sluice.js', 'dev', '--port', '0', '--data-dir', join(dir, 'data'), '--log-level', 'warn']
  const profile = process.env.BENCH_PROFILE_DIR ? [`--cpu-prof`, `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : []
  const sluice = await startChild(
    [...profile, ...(mode === 'http' ? args : [...args, '--functions', 'bench/serve/functions.ts'])],
    env,
  )
  let app: Child | undefined
  try {
    if (mode === 'http') {
      app = await startChild(['bench/serve/app.ts'], { ...env, SLUICE_URL: sluice.url })
      const res = await fetch(`${sluice.url}/v1/apps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: app.url }),
      })
      if (res.status !== 200) throw new Error(`sync: HTTP ${res.status} ${await res.text()}`)
    }
    // Latency first, one run at a time on an idle server (each run ends before the next event):
    // accepted → the run's first call, with nothing queued ahead of it.
    const accepted = new Map<number, number>()
    for (let n = 0; n < LATENCY_RUNS; n++) {
      accepted.set(n, await post(sluice.url, [{ name: 'bench/steps', data: { n } }]))
      for (let deadline = Date.now() + 30_000; (await completed(log)) <= n; await sleep(5))
        if (Date.now() > deadline) throw new Error(`latency run ${n} did not complete`)
    }
    const first = await logged(log, 'first')
    const latencies = [...accepted].map(([n, at]) => (first.get(n) ?? Number.NaN) - at).sort((a, b) => a - b)
    // Throughput: RUNS runs sent at once, until every one completed.
    const pid = sluice.child.pid!
    const cpuBefore = cpuMs(pid)
    const appCpuBefore = app ? cpuMs(app.child.pid!) : 0
    const started = Date.now()
    const events = Array.from({ length: RUNS }, (_, i) => ({ name: 'bench/steps', data: { n: LATENCY_RUNS + i } }))
    for (let i = 0; i < events.length; i += 500) await post(sluice.url, events.slice(i, i + 500))
    for (let deadline = Date.now() + 300_000; (await completed(log)) < LATENCY_RUNS + RUNS; await sleep(100))
      if (Date.now() > deadline) throw new Error('throughput runs did not complete')
    const seconds = (Date.now() - started) / 1000
    const calls = RUNS * CALLS_PER_RUN
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]
    return {
      mode,
      'µs CPU/step call': Math.round(((cpuMs(pid) - cpuBefore) * 1000) / calls),
      "app's µs CPU/call": app ? Math.round(((cpuMs(app.child.pid!) - appCpuBefore) * 1000) / calls) : '—',
      'step calls/s': Math.round(calls / seconds),
      'p50 ms': pct(50),
      'p99 ms': pct(99),
      'peak RSS MiB': peakRssMb(pid),
    }
  } finally {
    await app?.stop()
    await sluice.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

const loadBefore = loadavg()[0]
const rows = []
for (let r = 0; r < ROUNDS; r++) for (const mode of ['http', 'in-process'] as const) rows.push(await round(mode))
report('serve', rows, { runs: RUNS, steps: STEPS, rounds: ROUNDS, loadBefore, loadAfter: loadavg()[0] })
