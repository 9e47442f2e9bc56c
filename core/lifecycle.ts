// The life of a server process, whatever it plays: its listeners first (a busy port fails the start at
// once, and probes answer while state is restored), then its stages in order; on stop, not ready,
// the HTTP listener drains, the stages stop in reverse, the adapters close, the ops listener last. And
// SIGTERM/SIGINT: stop within the grace period, or exit non-zero.
import type { Logger } from 'pino'
import type { Health } from './health.ts'

export interface Stage {
  start(): Promise<void>
  stop(): Promise<void>
}

/** An HTTP listener: `start` resolves with its URL. */
export interface Listener {
  start(): Promise<string>
  stop(): Promise<void>
}

export interface ProcessParts {
  /** The HTTP roles' server. Stopped first, so requests drain before the stages. */
  http?: Listener
  /** The probes' and metrics' own listener (every process but sluice dev). Stopped last: probes answer during the drain. */
  ops?: Listener
  stages: Stage[]
  health: Health
  closeAdapters(): Promise<void>
  /** After `stop()` marks the process not ready, so load balancers stop sending before the listener closes. */
  shutdownDelayMs: number
  /** Called once the process stopped or failed to start (metrics of the process). */
  onExit(): void
}

export interface RunningProcess {
  /** The HTTP listener's URL, or the ops listener's in a process without HTTP roles. */
  url: string
  opsUrl?: string
  stop(): Promise<void>
}

export async function runProcess(parts: ProcessParts, log: Logger, upFields: object): Promise<RunningProcess> {
  const { http, ops, health } = parts
  const started: Stage[] = []
  const stopStarted = async () => {
    for (const stage of [...started].reverse()) await stage.stop()
    await parts.closeAdapters()
  }
  let url: string
  let opsUrl: string | undefined
  try {
    opsUrl = await ops?.start()
    url = (await http?.start()) ?? opsUrl!
    for (const stage of parts.stages) {
      await stage.start()
      started.push(stage)
    }
  } catch (err) {
    // An embedding process (startRunner) lives on: release what was opened before rethrowing.
    await http?.stop().catch(() => {})
    await ops?.stop().catch(() => {})
    await stopStarted().catch((cleanup) => log.warn({ err: cleanup }, 'cleanup after a failed start failed'))
    parts.onExit()
    throw err
  }
  health.markStarted()
  log.info({ url, ...(opsUrl && { opsUrl }), ...upFields }, 'sluice is up')
  return {
    url,
    opsUrl,
    async stop() {
      health.markStopping()
      if (parts.shutdownDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, parts.shutdownDelayMs))
      await http?.stop()
      try {
        await stopStarted()
      } finally {
        await ops?.stop()
        parts.onExit()
      }
    },
  }
}

/** SIGTERM and SIGINT stop the process: exit 0 once stopped, 1 when stopping fails or outlasts `graceMs`. */
export function stopOnSignals(running: { stop(): Promise<void> }, graceMs: number, log: Logger): void {
  const shutdown = async (signal: string) => {
    log.info({ signal, graceMs }, 'stopping')
    setTimeout(() => {
      log.error({ graceMs }, 'shutdown took longer than the grace period; exiting')
      process.exit(1)
    }, graceMs).unref()
    try {
      await running.stop()
    } catch (err) {
      log.error({ err }, 'shutdown failed')
      process.exit(1)
    }
    log.info('stopped')
    process.exit(0)
  }
  process.once('SIGINT', shutdown)
  process.once('SIGTERM', shutdown)
}
