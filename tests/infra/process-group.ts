import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

export type ServiceProcess = { pid: number; exited: () => boolean; logFile: string }

/**
 * Starts a server in its own process group with output to a file, unref'd, so the
 * caller (tap, or up.ts which exits right away) never waits on it, and so stopping
 * it can kill the whole group, including anything it forked.
 */
export function spawnService(command: string, args: string[], logFile: string, cwd: string): ServiceProcess {
  const log = openSync(logFile, 'a')
  const child = spawn(command, args, { cwd, detached: true, stdio: ['ignore', log, log] })
  closeSync(log)
  if (child.pid === undefined) throw new Error(`could not start ${command}`)
  let hasExited = false
  child.on('exit', () => (hasExited = true))
  child.on('error', () => (hasExited = true))
  child.unref()
  return { pid: child.pid, exited: () => hasExited, logFile }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Signals the group led by `pid`; a group that is already gone is fine. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal)
  } catch {
    // ESRCH: nothing left to stop.
  }
}

/** Sends `signal`, then SIGKILL if the leader is still there after `graceMs`. */
export async function stopGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL', graceMs = 15_000): Promise<void> {
  signalGroup(pid, signal)
  const deadline = Date.now() + graceMs
  while (isAlive(pid) && !isZombie(pid)) {
    if (Date.now() > deadline) {
      signalGroup(pid, 'SIGKILL')
      break
    }
    await sleep(100)
  }
  // A SIGKILLed process can take a moment to release its ports.
  while (isAlive(pid) && !isZombie(pid)) await sleep(50)
}

/** Our own detached children stay zombies until node reaps them; they hold no ports. */
function isZombie(pid: number): boolean {
  try {
    return /\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

/** Guards against killing an unrelated process that reused a recorded pid. */
export function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
  } catch {
    return ''
  }
}

/**
 * Kills the groups and removes their temp dir when this node process ends, also
 * by SIGINT/SIGTERM/SIGALRM (tap's timeout), so a failed test cannot leave brokers or
 * data behind. Returns the unregister.
 */
export function killGroupsOnExit(pids: () => number[], dir: string): () => void {
  const cleanUp = () => {
    pids().forEach((pid) => signalGroup(pid, 'SIGKILL'))
    // Synchronous: 'exit' handlers cannot await. Retries cover a dying JVM's last writes.
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 })
  }
  const onSignal = (signal: NodeJS.Signals) => {
    cleanUp()
    unregister()
    // Re-raise so the process still ends the way it would have without us.
    process.kill(process.pid, signal)
  }
  const unregister = () => {
    process.off('exit', cleanUp)
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGALRM'] as const) process.off(signal, onSignal)
  }
  process.on('exit', cleanUp)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGALRM'] as const) process.on(signal, onSignal)
  return unregister
}

/** Last lines of a service's log, for error messages when it fails to start. */
export function logTail(logFile: string, bytes = 3000): string {
  try {
    return readFileSync(logFile, 'utf8').slice(-bytes)
  } catch {
    return '(no log)'
  }
}
