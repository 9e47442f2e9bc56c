// bench/ingest/functions.ts: single events through the Event API of a Dev Server that serves N
// functions, each run once first (so each has its runner group and topic), none triggered by the
// load's events. What the Event API costs should not grow with the functions a deployment serves:
// server CPU per request (utime + stime of /proc/<pid>/stat) and req/s, by N, fresh server per case;
// nor what the server costs idle, before the load (CPU ms per second over 5 s).
// Usage: node --conditions=sluice-source bench/ingest/functions.ts [counts, e.g. 0,50,200] [seconds]
//   [--baseline <checkout>] (another worktree, run beside each case, alternating)
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ROOT, report, startSluice } from '../lib.ts'
import { accepted, acceptedPerSec, cpuMicros, ensureWrk, round, wrk } from '../wrk.ts'
import { event } from './events.ts'

const args = process.argv.slice(2)
const baselineAt = args.indexOf('--baseline')
const baseline = baselineAt >= 0 ? args.splice(baselineAt, 2)[1] : undefined
const counts = (args[0] ?? '0,50,200').split(',').map(Number)
const seconds = Number(args[1] ?? 8)
const CONNECTIONS = 64
const RUNS_PAGE = 1000
const IDLE_SECONDS = 5

ensureWrk()
const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-functions-'))
const rows: Array<Record<string, string | number>> = []
const results: Record<string, Record<string, number>> = {}
try {
  for (const n of counts) {
    for (const [name, root] of [['sluice', ROOT], ...(baseline ? [['baseline', baseline]] : [])] as const) {
      // Each checkout serves them with its own client.
      const file = join(dir, `${name}-${n}.ts`)
      await writeFile(file, functionsFile(n, root))
      const run = await measure(n, file, root)
      rows.push({ case: `${name}, ${n} functions`, ...run })
      results[`${name}:${n}`] = {
        requestsPerSec: run['req/s'],
        cpuPerReqUs: run['cpu µs/req'],
        idleCpuMsPerSec: run['idle cpu ms/s'],
      }
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true })
}
report('ingest-functions', rows, { seconds, connections: CONNECTIONS, results })

/** N functions, `f<i>` triggered by `scale/f<i>`: one step each, written with `root`'s client. */
function functionsFile(n: number, root: string): string {
  const lines = [
    `import { Client } from '${join(root, 'client/index.ts')}'`,
    `const client = new Client({ id: 'scale' })`,
  ]
  for (let i = 0; i < n; i++)
    lines.push(
      `export const f${i} = client.createFunction({ id: 'f${i}' }, { event: 'scale/f${i}' }, async ({ step }) => step.run('a', () => 1))`,
    )
  return `${lines.join('\n')}\n`
}

async function measure(n: number, file: string, root: string) {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-'))
  const server = await startSluice(dataDir, n > 0 ? { SLUICE_FUNCTIONS: file } : {}, root)
  try {
    const pid = server.child.pid!
    if (n > 0) {
      const body = JSON.stringify(Array.from({ length: n }, (_, i) => ({ name: `scale/f${i}`, data: {} })))
      const response = await fetch(`${server.url}/e/k`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      })
      if (response.status !== 200) throw new Error(`the first events: ${response.status} ${await response.text()}`)
      // Each function's run made its topic and its runner group: wait until every run completed.
      const runs = Math.min(n, RUNS_PAGE)
      for (let waited = 0; (await completedRuns(server.url)) < runs; waited += 250) {
        if (waited > 60_000) throw new Error(`${await completedRuns(server.url)} of ${runs} runs completed after 60 s`)
        await sleep(250)
      }
    }
    // Idle: what serving N functions costs while no event comes (timers, retention, metrics).
    await sleep(2_000)
    const idleFrom = cpuMicros(pid)
    await sleep(IDLE_SECONDS * 1_000)
    const idle = (cpuMicros(pid) - idleFrom) / 1_000 / IDLE_SECONDS
    const single = JSON.stringify(event(1))
    await wrk(`${server.url}/e/k`, single, CONNECTIONS, 2)
    const before = cpuMicros(pid)
    const run = await wrk(`${server.url}/e/k`, single, CONNECTIONS, seconds)
    return {
      'req/s': acceptedPerSec(run),
      'cpu µs/req': round((cpuMicros(pid) - before) / accepted(run), 1),
      'p99 ms': run.p99Ms,
      refused: run.non2xx,
      'idle cpu ms/s': round(idle, 1),
    }
  } finally {
    await server.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

/** How many runs have completed (at most RUNS_PAGE counted: past that, the first page's worth is waited for). */
async function completedRuns(url: string): Promise<number> {
  const { data } = (await (await fetch(`${url}/v1/runs?status=completed&limit=${RUNS_PAGE}`)).json()) as {
    data: unknown[]
  }
  return data.length
}
