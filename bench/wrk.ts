// Load from Debian's wrk (C, one thread): on 2 cores a Node load generator takes most of a
// core and depresses every ratio, so the server's own CPU time is what the benches report.
import { spawnSync, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface WrkResult {
  requests: number
  seconds: number
  requestsPerSec: number
  p50Ms: number
  p99Ms: number
  /** Answers outside 2xx/3xx, and socket errors (connect, read, write, timeout). */
  non2xx: number
  socketErrors: number
}

/** Installs wrk from Debian when it is missing (the benches run as root here); throws with the command otherwise. */
export function ensureWrk(): void {
  if (spawnSync('wrk', ['--version']).error === undefined) return
  const apt = spawnSync('apt-get', ['install', '-y', '-q', 'wrk'], { stdio: 'inherit' })
  if (apt.status !== 0) throw new Error('bench: wrk is missing; install it with `apt-get install wrk`')
}

// wrk's Lua hooks: a fixed POST, and one JSON line with the counts at the end.
const SCRIPT = `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = io.open(os.getenv("WRK_BODY_FILE")):read("*a")
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,' ..
    '"status":%d,"socket":%d}\\n', summary.requests, summary.duration, latency:percentile(50),
    latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))
end
`

/** POSTs `body` to `url` from `connections` keep-alive connections for `seconds`, on one wrk thread. */
export async function wrk(url: string, body: string, connections: number, seconds: number): Promise<WrkResult> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-wrk-'))
  try {
    await writeFile(join(dir, 'post.lua'), SCRIPT)
    await writeFile(join(dir, 'body.json'), body)
    const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', join(dir, 'post.lua'), url]
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', args, { env: { ...process.env, WRK_BODY_FILE: join(dir, 'body.json') } })
      let text = ''
      child.stdout.on('data', (c: Buffer) => (text += c.toString()))
      child.stderr.on('data', (c: Buffer) => (text += c.toString()))
      child.once('error', reject)
      child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}: ${text}`))))
    })
    const line = /WRK_RESULT (\{.*\})/.exec(out)
    if (!line) throw new Error(`wrk printed no result: ${out}`)
    const r = JSON.parse(line[1]) as Record<string, number>
    const secondsRun = r.duration_us / 1e6
    return {
      requests: r.requests,
      seconds: secondsRun,
      requestsPerSec: Math.round(r.requests / secondsRun),
      p50Ms: round(r.p50_us / 1000),
      p99Ms: round(r.p99_us / 1000),
      non2xx: r.status,
      socketErrors: r.socket,
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const TICKS_PER_SECOND = 100 // getconf CLK_TCK on Linux

/** utime + stime of a process so far, in microseconds (fields 14 and 15 of /proc/<pid>/stat). */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name (field 2) may hold spaces; fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND
}

/** Current resident memory of a process, in MiB. */
export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Math.round(Number(match[1]) / 1024) : NaN
}

export function round(value: number, digits = 1): number {
  const f = 10 ** digits
  return Math.round(value * f) / f
}

/** Requests answered 2xx/3xx: what a server took. */
export function accepted(run: WrkResult): number {
  return run.requests - run.non2xx
}

/** Accepted requests per second, rounded. */
export function acceptedPerSec(run: WrkResult): number {
  return Math.round(accepted(run) / run.seconds)
}
