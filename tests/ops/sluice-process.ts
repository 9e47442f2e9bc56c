// `sluice …` as a child process whose whole output is kept (to look for secrets in it) and whose
// exit is timed from the moment it was spawned.
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { ROOT } from '../helpers/server.ts'

export interface SluiceProcess {
  child: ChildProcess
  /** stdout and stderr so far. */
  output(): string
  /** Exit code (null when killed by a signal) and milliseconds from spawn to exit. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>
  /** Resolves with the listener's URL once the process logged that it is up. */
  up(timeoutMs?: number): Promise<string>
  /** Resolves with the time at which `pattern` first appeared in the output. */
  logged(pattern: RegExp, timeoutMs?: number): Promise<number>
}

/** `wrapper`: a command that runs sluice's (strace …), whose exit is then the one timed. */
export function spawnSluice(args: string[], env: NodeJS.ProcessEnv, wrapper: string[] = []): SluiceProcess {
  const started = Date.now()
  const [command, ...rest] = [
    ...wrapper,
    process.execPath,
    '--no-node-snapshot',
    '--conditions=sluice-source',
    join(ROOT, 'bin/sluice.js'),
    ...args,
  ]
  const child = spawn(command, rest, {
    // A free ops port unless the test names one: test files run in parallel, and each process has the listener.
    env: { ...process.env, SLUICE_LOG_LEVEL: 'info', SLUICE_OPS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const waiters = new Set<() => void>()
  const onData = (chunk: Buffer) => {
    output += chunk.toString()
    for (const wake of waiters) wake()
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal, ms: Date.now() - started })
      for (const wake of waiters) wake()
    })
  })
  const logged = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`no ${pattern} within ${timeoutMs} ms:\n${output}`)), timeoutMs)
      const check = () => {
        if (pattern.test(output)) finish()
        else if (child.exitCode !== null || child.signalCode !== null)
          finish(new Error(`exited before ${pattern}:\n${output}`))
      }
      const finish = (err?: Error) => {
        clearTimeout(timer)
        waiters.delete(check)
        if (err) reject(err)
        else resolve(Date.now())
      }
      waiters.add(check)
      check()
    })
  return {
    child,
    output: () => output,
    exited,
    logged,
    async up(timeoutMs = 60_000) {
      await logged(/"msg":"sluice is up"/, timeoutMs)
      return /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"sluice is up"/.exec(output)![1]
    },
  }
}
