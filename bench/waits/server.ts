// What the bench/waits scripts share: an embedded `sluice dev` serving bench/waits/functions.ts on a
// fresh data dir, sending events through the Event API, reading the server's /metrics, waiting for
// its pipeline to settle, and the size of its data dir.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { allocatorOf, rocksdbIdle, startChild, type Child } from '../lib.ts'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { lastOffset } from '../../bus/local-layout.ts'

/** jemalloc as the image and scripts/start.sh run it (Dockerfile, docs/operations.md "Allocator"). */
const JEMALLOC = '/lib/x86_64-linux-gnu/libjemalloc.so.2'

export interface Server extends Child {
  pid: number
  dataDir: string
  allocator: string
  /** Has V8 collect garbage (a full GC) in the server, through its inspector (`inspect: true`). */
  collectGarbage(): Promise<void>
  /** Stops the server (unless stopped already) and removes its data dir. */
  close(): Promise<void>
}

/**
 * `sluice dev --functions bench/waits/functions.ts` on a fresh data dir, started with node directly
 * (not scripts/start.sh, which may reinstall into a shared node_modules) but with the image's node
 * flags and allocator. `inspect`: with node's inspector on a loopback port, so the bench can ask
 * for a full GC before it reads V8's heap. `functions`: another functions file (inside the
 * repository, so `sluice/client` resolves); `env`: more environment for the server.
 */
export async function startServer(
  name: string,
  options: { inspect?: boolean; functions?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Server> {
  const nodeFlags: string[] = []
  // BENCH_CPU_PROF_DIR=<dir>: each server writes a .cpuprofile there when stopped (docs/operations.md).
  const profileDir = process.env.BENCH_CPU_PROF_DIR
  if (profileDir) nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`)
  const inspectPort = options.inspect ? await freePort() : undefined
  if (inspectPort) nodeFlags.push(`--inspect=127.0.0.1:${inspectPort}`)
  const dir = await mkdtemp(join(tmpdir(), `sluice-bench-waits-${name}-`))
  const dataDir = join(dir, 'data')
  const jemalloc = jemallocPath()
  const child = await startChild(
    [
      '--max-semi-space-size=16',
      ...nodeFlags,
      'bin/sluice.js',
      'dev',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--functions',
      options.functions ?? 'bench/waits/functions.ts',
      '--log-level',
      'warn',
    ],
    {
      SLUICE_LOG_LEVEL: 'warn',
      ...(jemalloc && {
        LD_PRELOAD: jemalloc,
        MALLOC_CONF: 'narenas:2,background_thread:true,dirty_decay_ms:5000,muzzy_decay_ms:0',
      }),
      MALLOC_ARENA_MAX: '2',
      ...options.env,
    },
  )
  const pid = child.child.pid!
  const server: Server = {
    ...child,
    pid,
    dataDir,
    allocator: allocatorOf(pid),
    async collectGarbage() {
      if (!inspectPort) throw new Error('collectGarbage: start the server with inspect: true')
      await inspectorCall(inspectPort, 'HeapProfiler.collectGarbage')
    },
    async close() {
      if (child.child.exitCode === null && child.child.signalCode === null) await child.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
  return server
}

function jemallocPath(): string | undefined {
  return existsSync(JEMALLOC) ? JEMALLOC : undefined
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/** One Chrome DevTools Protocol call to the node inspector on `port`; resolves with its answer. */
async function inspectorCall(port: number, method: string): Promise<unknown> {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string
  }>
  const socket = new WebSocket(target.webSocketDebuggerUrl)
  try {
    await new Promise((resolve, reject) => {
      socket.onopen = resolve
      socket.onerror = reject
    })
    return await new Promise((resolve, reject) => {
      socket.onmessage = (message) => {
        const answer = JSON.parse(String(message.data)) as { id?: number; result?: unknown; error?: unknown }
        if (answer.id !== 1) return
        if (answer.error) reject(new Error(`${method}: ${JSON.stringify(answer.error)}`))
        else resolve(answer.result)
      }
      socket.send(JSON.stringify({ id: 1, method }))
    })
  } finally {
    socket.close()
  }
}

/**
 * POSTs `events` in one request; on backpressure (429, 503 PIPELINE_BEHIND) waits as Retry-After
 * says and sends the same events again with the same ids, as the client library does.
 */
export async function send(server: Child, events: Array<Record<string, unknown>>): Promise<void> {
  const body = JSON.stringify(events)
  for (;;) {
    const response = await fetch(`${server.url}/e/bench`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    const text = await response.text()
    if (response.status === 200) return
    if (response.status !== 429 && response.status !== 503) throw new Error(`HTTP ${response.status}: ${text}`)
    await sleep(Number(response.headers.get('retry-after') ?? 1) * 1000)
  }
}

/** Sends `count` events made by `make(i)` in batches of `batch`, `inFlight` requests at a time. */
export async function sendAll(
  server: Child,
  count: number,
  make: (i: number) => Record<string, unknown>,
  batch = 500,
  inFlight = 2,
): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) {
      const from = next
      next = Math.min(count, next + batch)
      await send(
        server,
        Array.from({ length: next - from }, (_, n) => make(from + n)),
      )
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
}

export async function metricsOf(server: Child): Promise<string> {
  return (await fetch(`${server.url}/metrics`)).text()
}

/** Every sample of `name` in a /metrics text, summed. */
export function sumOf(metrics: string, name: string): number {
  let sum = 0
  for (const m of metrics.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(m[1])
  return sum
}

/**
 * Records on the `wait-keys` topic (router/waits-topic.ts: one per (env, event, match path) is
 * meant), read from the data dir of a stopped server.
 */
export async function waitKeyRecords(server: Server): Promise<number> {
  const rocks = await openRocks(join(server.dataDir, 'db'), rocksOptionsOf(DEFAULTS))
  try {
    return (await lastOffset(rocks, 'sluice.wait-keys', 0)) + 1
  } finally {
    await rocks.close()
  }
}

/** The value of one series (`name{labels}` exactly as /metrics prints it), 0 when absent. */
export function seriesOf(metrics: string, series: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

/**
 * Waits until every consumer group of the server has handled all its records (the summed
 * `sluice_consumer_lag_records` is 0 on two scrapes in a row, 250 ms apart), then until RocksDB runs
 * no flush or compaction. Returns when the first held (`caughtUpAt`, ms) and the ms the second took.
 */
export async function settled(server: Child, timeoutMs = 600_000): Promise<{ caughtUpAt: number; idleMs: number }> {
  const started = Date.now()
  let caughtUpAt = 0
  for (let quiet = 0; quiet < 2; await sleep(250)) {
    if (Date.now() - started > timeoutMs) throw new Error(`the server did not settle in ${timeoutMs} ms`)
    const lag = sumOf(await metricsOf(server), 'sluice_consumer_lag_records')
    if (lag === 0 && quiet === 0) caughtUpAt = Date.now()
    quiet = lag === 0 ? quiet + 1 : 0
  }
  const idleMs = await rocksdbIdle(async () => {
    const metrics = await metricsOf(server)
    return [...metrics.matchAll(/^sluice_rocksdb_jobs_running\{[^}]*\} (\d+)/gm)].map((m) => Number(m[1]))
  })
  return { caughtUpAt, idleMs }
}

/**
 * The bytes of a directory's files (du --apparent-size), in KiB: RocksDB preallocates its write-ahead
 * log, so the blocks in use (plain du) stay put while data goes into it.
 */
export function duKib(path: string): number {
  return Number(execFileSync('du', ['-sk', '--apparent-size', path]).toString().split('\t')[0])
}

/** V8 heap used and RocksDB's memory (memtables, block caches, table readers), in MiB, from /metrics. */
export async function memoryOf(server: Child): Promise<{ heapUsedMb: number; rocksdbMb: number }> {
  const metrics = await metricsOf(server)
  const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)
  return {
    heapUsedMb: mb(sumOf(metrics, 'nodejs_heap_size_used_bytes')),
    rocksdbMb: mb(sumOf(metrics, 'sluice_rocksdb_memory_bytes')),
  }
}

/** All runs of a function in a status, over REST (newest first, 1,000 a page). */
export async function runsOf(server: Child, functionId: string, status: string): Promise<any[]> {
  const runs: any[] = []
  let cursor: string | null = null
  do {
    const query = new URLSearchParams({ function: functionId, status, limit: '1000', ...(cursor && { cursor }) })
    const page = (await (await fetch(`${server.url}/v1/runs?${query}`)).json()) as {
      data: any[]
      metadata: { cursor: string | null }
    }
    runs.push(...page.data)
    cursor = page.metadata.cursor
  } while (cursor)
  return runs
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
