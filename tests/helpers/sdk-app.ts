// Starts one of the test apps written with Inngest's official SDKs (tests/sdk/apps) as a child process on
// a free loopback port, with only the environment variables that SDK reads, as a user would deploy it.
// Provisioned by tests/infra/provision.sh (the Python venv and the Go binary); npm `inngest` 4.x and 3.x
// (as inngest-v3) are dev dependencies. The variables each SDK reads are in docs/inngest-sdk-protocol.md.
import { spawn } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pollUntil } from '../infra/poll.ts'
import { freePort } from '../infra/ports.ts'
import { signalGroup, stopGroup } from '../infra/process-group.ts'

export type SdkKind = 'ts-v4' | 'ts-v3' | 'python' | 'go'

export interface SdkAppEnv {
  /** Sluice's origin, e.g. http://127.0.0.1:8288: the SDK's API and Event API base. */
  sluiceUrl: string
  signingKey?: string
  eventKey?: string
  /** Dev mode: INNGEST_DEV=<sluiceUrl>, nothing signed. Production: the base URLs and keys. */
  dev: boolean
  /** More variables for the app (e.g. INNGEST_SIGNING_KEY_FALLBACK), set last. */
  extra?: Record<string, string>
}

export interface SdkApp {
  kind: SdkKind
  /** The serve() URL to sync: http://127.0.0.1:<port>/api/inngest. */
  url: string
  /** The app id the SDK registers, `sdk-<kind>`. */
  appId: string
  /** What the app printed so far (stdout and stderr). */
  output(): string
  stop(): Promise<void>
}

const root = fileURLToPath(new URL('../..', import.meta.url))
const cache = join(root, 'tests/infra/.cache')
export const PYTHON_VENV = join(cache, 'sdk-python-inngest-0.5.19')
export const GO_BINARY = join(cache, 'go-sdk/sdk-go')

function command(kind: SdkKind): { file: string; args: string[] } {
  if (kind === 'python') return { file: join(PYTHON_VENV, 'bin/python'), args: ['tests/sdk/apps/python/app.py'] }
  if (kind === 'go') return { file: GO_BINARY, args: [] }
  return { file: process.execPath, args: [`tests/sdk/apps/${kind}/app.ts`] }
}

/** Whether the kind can run here (the Python venv and the Go binary come from tests/infra/provision.sh). */
export function sdkAvailable(kind: SdkKind): boolean {
  return existsSync(command(kind).file)
}

/**
 * The variables each SDK reads, verified in its source (inngest-js helpers/consts.ts envKeys, inngest-py
 * const.EnvKey, inngestgo client.go/handler.go). In production INNGEST_DEV is "0" for JS and Python and
 * absent for Go, which treats any non-empty INNGEST_DEV as dev mode.
 */
export function sdkEnv(kind: SdkKind, env: SdkAppEnv, port: number): Record<string, string> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key, value]) => !key.startsWith('INNGEST_') && value !== undefined),
  ) as Record<string, string>
  const vars: Record<string, string> = { ...inherited, PORT: String(port) }
  if (env.dev) vars.INNGEST_DEV = env.sluiceUrl
  else {
    // npm inngest 3.x without INNGEST_DEV is in dev mode (unsigned, accepting anything) unless NODE_ENV and
    // the like say production; "0" makes cloud mode explicit for JS and Python. Go: any value means dev.
    if (kind !== 'go') vars.INNGEST_DEV = '0'
    vars.INNGEST_BASE_URL = env.sluiceUrl
    vars.INNGEST_API_BASE_URL = env.sluiceUrl
    vars.INNGEST_EVENT_API_BASE_URL = env.sluiceUrl
  }
  if (env.signingKey) vars.INNGEST_SIGNING_KEY = env.signingKey
  if (env.eventKey) vars.INNGEST_EVENT_KEY = env.eventKey
  return { ...vars, ...env.extra }
}

export async function startSdkApp(kind: SdkKind, env: SdkAppEnv): Promise<SdkApp> {
  const { file, args } = command(kind)
  if (!existsSync(file)) throw new Error(`${kind} app: ${file} is missing; run tests/infra/provision.sh`)
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), `sluice-sdk-${kind}-`))
  const logFile = join(dir, 'app.log')
  const log = openSync(logFile, 'a')
  // Its own process group, so stop() also ends anything it forked (Flask's reloader is off; Go forks nothing).
  const child = spawn(file, args, {
    cwd: root,
    env: sdkEnv(kind, env, port),
    detached: true,
    stdio: ['ignore', log, log],
  })
  closeSync(log)
  if (child.pid === undefined) throw new Error(`${kind} app: could not start ${file}`)
  const pid = child.pid
  let exited: string | undefined
  child.on('exit', (code, signal) => (exited = `exited (${signal ?? code})`))
  const onExit = () => signalGroup(pid, 'SIGKILL')
  process.on('exit', onExit)
  const output = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '')
  const url = `http://127.0.0.1:${port}/api/inngest`
  const stop = async () => {
    process.off('exit', onExit)
    await stopGroup(pid, 'SIGTERM', 5_000)
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    // The SDKs answer GET on their serve path (the introspection) once they listen; unsigned in production,
    // some answer 401, which is an answer too.
    await pollUntil(async () => (await fetch(url)).status < 500, {
      what: `${kind} app on ${url}`,
      timeoutMs: 30_000,
      intervalMs: 100,
      abortIf: () => (exited ? `${exited}: ${output().slice(-2000)}` : undefined),
    })
  } catch (error) {
    await stop()
    throw error
  }
  const appId = `sdk-${kind}`
  return { kind, url, appId, output, stop }
}
