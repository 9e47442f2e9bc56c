// Starts real Sluice servers for tests: in-process (fast) or as a child process (for kill -9).
import { spawn, type ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig, type Flags } from '../../config/config.ts'
import { createLogger } from '../../server/log.ts'
import { startEmbedded, type Running } from '../../server/embedded.ts'
import { responseSchemaCheck } from './response-schemas.ts'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

const tempDirs: string[] = []

/** A fresh directory under the system's temp dir, removed when the test process exits. */
export async function tempDir(prefix = 'sluice-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  if (tempDirs.length === 0)
    process.on('exit', () => {
      killChildren() // a child server still running would write into its directory
      for (const d of tempDirs)
        try {
          rmSync(d, { recursive: true, force: true, maxRetries: 3 })
        } catch {
          // left behind, as before: never a failed exit over a temp directory
        }
    })
  tempDirs.push(dir)
  return dir
}

export interface TestServer extends Running {
  dataDir: string
}

/**
 * An embedded server on 127.0.0.1 and a free port; `t.teardown(server.stop)`. Its REST responses
 * are checked against their declared schemas (tests/helpers/response-schemas.ts).
 */
export async function startServer(
  options: { mode?: 'dev' | 'start'; dataDir?: string; flags?: Flags; env?: NodeJS.ProcessEnv } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await tempDir())
  const mode = options.mode ?? 'dev'
  const config = loadConfig(
    mode,
    {
      port: '0',
      host: '127.0.0.1',
      dataDir,
      logLevel: 'warn',
      // The ops listener (/metrics, probes) of sluice start on a free port too: test files run in parallel.
      ...(mode === 'start' && { signingKey: TEST_SIGNING_KEY, opsPort: '0' }),
      ...options.flags,
    },
    options.env ?? {},
  )
  const running = await startEmbedded(config, createLogger(config.logLevel), { httpPlugins: [responseSchemaCheck()] })
  exitAsSluiceDoes()
  return { ...running, dataDir }
}

let exitHooked = false
/**
 * A process that ran a server ends as `sluice` does, by process.exit once the rest of 'exit' is
 * done (core/lifecycle.ts stops the server, then exits), not by Node's own teardown of the
 * environment. In that teardown isolated-vm 7.0.1 releases its hold on the main isolate first; a
 * handle of its collected after that finds none and aborts the process (`Assertion
 * environment != nullptr failed`, SIGABRT after every subtest had passed: a clean-clone CI run of
 * tests/dashboard/insights, once in six).
 */
function exitAsSluiceDoes(): void {
  if (exitHooked) return
  exitHooked = true
  process.on('exit', () => process.exit())
}

export const TEST_SIGNING_KEY = 'test-signing-key-0123456789'

export interface ChildServer {
  url: string
  /** The ops listener's URL (/healthz, /readyz, /metrics); undefined for sluice dev, which has none. */
  opsUrl?: string
  child: ChildProcess
  stopped: Promise<number | null>
  /** The fields of the line that printed the URL ("sluice is up"): roles, kafkaClient, … */
  up: Record<string, unknown>
}

const children = new Set<ChildProcess>()
let killingOnExit = false
const EXIT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGALRM'] as const

/** Kills every child server still running, then lets the signal end this process as it would have. */
function killChildren(signal?: NodeJS.Signals): void {
  for (const child of children) child.kill('SIGKILL')
  if (signal === undefined) return
  for (const s of EXIT_SIGNALS) process.off(s, killChildren)
  process.kill(process.pid, signal)
}

/**
 * Child servers die with the test process, also on tap's timeout (SIGALRM), whose teardowns
 * never run: otherwise they are left running, holding ports, consumer groups and CPU.
 */
function killChildrenOnExit(child: ChildProcess): void {
  if (!killingOnExit) {
    killingOnExit = true
    process.on('exit', () => killChildren())
    for (const s of EXIT_SIGNALS) process.on(s, killChildren)
  }
  children.add(child)
  child.once('exit', () => children.delete(child))
}

/**
 * `sluice <command>` as a separate process; resolves once it prints its URL. The timeout only
 * bounds a failure: on a loaded 2-core machine several roles starting at once took over 30 s.
 */
export function spawnServer(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  startTimeoutMs = 90_000,
): Promise<ChildServer> {
  const node = ['--no-node-snapshot', '--conditions=sluice-source', join(ROOT, 'bin/sluice.js')]
  return spawnUntilUp(process.execPath, [...node, ...args], env, startTimeoutMs)
}

/** `npm start` (scripts/start.sh, which execs node: the child's pid is the server's) with `args`. */
export function spawnStartScript(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ChildServer> {
  return spawnUntilUp('bash', [join(ROOT, 'scripts/start.sh'), ...args], env, 90_000)
}

async function spawnUntilUp(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  startTimeoutMs: number,
): Promise<ChildServer> {
  const child = spawn(command, args, {
    // A free ops port unless the test names one: test files run in parallel, and each process has the listener.
    env: { ...process.env, SLUICE_LOG_LEVEL: 'info', SLUICE_OPS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  killChildrenOnExit(child)
  const stopped = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  let output = ''
  let up: Record<string, unknown> = {}
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output)
      const lineEnd = match ? output.indexOf('\n', match.index) : -1
      if (!match || lineEnd === -1) return
      up = parseLogLine(output.slice(output.lastIndexOf('\n', match.index) + 1, lineEnd))
      clearTimeout(deadline)
      // Up: stop collecting (the stream stays flowing, so a chatty child never blocks on its pipe).
      child.stdout!.off('data', onData)
      child.stderr!.off('data', onError)
      resolve(match[1])
    }
    const onError = (chunk: Buffer) => {
      output += chunk.toString()
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onError)
    child.once('exit', (code) => reject(new Error(`sluice exited with ${code} before it was up:\n${output}`)))
    // Killed, so a node that comes up late is not left running unowned.
    const deadline = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`sluice did not come up in ${startTimeoutMs} ms:\n${output}`))
    }, startTimeoutMs)
    deadline.unref()
  })
  return { url, opsUrl: typeof up.opsUrl === 'string' ? up.opsUrl : undefined, child, stopped, up }
}

function parseLogLine(line: string): Record<string, unknown> {
  try {
    return JSON.parse(line)
  } catch {
    return {}
  }
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true })
}

/** Polls until `check` returns a value that is not undefined (pipelines are asynchronous). */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    /* keep text */
  }
  return { status: response.status, body: parsed, headers: response.headers }
}

export async function getJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers })
  return { status: response.status, body: await response.json() }
}
