// Shared bench helpers: child servers, RSS, waiting for RocksDB to go idle, and JSON + table output
// (load comes from bench/wrk.ts).
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

export interface Child {
  url: string
  child: ChildProcess
  stop(): Promise<void>
}

/** Starts a node process that prints `"url":"http://…"` (pino) or `listening http://…` once up. */
export function startChild(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Child> {
  return startProcess(process.execPath, ['--no-node-snapshot', '--conditions=sluice-source', ...args], env)
}

async function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv, cwd = ROOT): Promise<Child> {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /"url":"(http[^"]+)"|(?:listening|Dev Server:) (http\S+)/.exec(out)
      if (m) resolve(m[1] ?? m[2])
    })
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)))
  })
  child.stdout!.resume()
  return {
    url,
    child,
    stop: () =>
      new Promise((r) => {
        child.once('exit', () => r())
        child.kill('SIGTERM')
      }),
  }
}

/**
 * `sluice dev` on `dataDir` by `npm start`'s script (scripts/start.sh: its node flags and allocator,
 * jemalloc when installed, as the image runs it). It execs node, so the child's pid is the server's.
 * `root`: another checkout's (a baseline commit's worktree, its node_modules installed).
 */
export function startSluice(dataDir: string, env: NodeJS.ProcessEnv = {}, root = ROOT): Promise<Child> {
  const args = ['scripts/start.sh', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn']
  return startProcess('bash', args, { SLUICE_LOG_LEVEL: 'warn', ...env }, root)
}

/** The malloc a process runs on: jemalloc when scripts/start.sh found it and preloaded it. */
export const allocatorOf = (pid: number) =>
  /libjemalloc/.test(readFileSync(`/proc/${pid}/maps`, 'utf8')) ? 'jemalloc' : 'glibc'

/** Peak resident memory of a process, in MiB. */
export function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Math.round(Number(match[1]) / 1024) : NaN
}

export function report(
  name: string,
  rows: Array<Record<string, string | number>>,
  extra: Record<string, unknown> = {},
): void {
  process.stdout.write(JSON.stringify({ bench: name, node: process.version, ...extra, rows }) + '\n\n')
  const columns = Object.keys(rows[0])
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)))
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ')
  process.stdout.write(line(columns) + '\n' + line(widths.map((w) => '-'.repeat(w))) + '\n')
  for (const row of rows) process.stdout.write(line(columns.map((c) => String(row[c]))) + '\n')
}

/**
 * Waits until RocksDB runs no flush or compaction (twice in a row, 250 ms apart: a flush may start a
 * compaction), at most 60 s, so the CPU a bench counts includes the compaction its load caused.
 * `jobsRunning`: the values of `sluice_rocksdb_jobs_running` now. Returns the ms it waited.
 */
export async function rocksdbIdle(jobsRunning: () => Promise<number[]>): Promise<number> {
  const started = Date.now()
  for (let quiet = 0; quiet < 2 && Date.now() - started < 60_000; await sleep(250)) {
    const running = await jobsRunning()
    quiet = running.length > 0 && running.every((n) => n === 0) ? quiet + 1 : 0
  }
  return Date.now() - started
}
