// `sluice/server`: serving functions from the user's own process, `startRunner({ client, functions })`.
// In the embedded mode the log is the local RocksDB of this process, so a runner process is a whole
// single-node Sluice serving those functions; against Kafka it plays the runner role only.
import { isSluiceFunction, type SluiceFunction } from '../client/function.ts'
import { checkRunnerConfig, loadConfig, runnerConfig } from '../config/config.ts'
import { createLogger } from './log.ts'
import type { Running } from './compose.ts'

export interface RunnerOptions {
  client: { id: string }
  functions: SluiceFunction[]
  /** Server settings, named as the CLI's flags in camelCase (`port`, `dataDir`, …); the rest comes from SLUICE_* variables. */
  flags?: Record<string, string | boolean | undefined>
  /** `dev` (open REST API, any event key) or `start` (needs a signing key). Default: `start`. */
  mode?: 'dev' | 'start'
}

export interface RunningRunner {
  url: string
  /** /healthz, /readyz and /metrics (SLUICE_OPS_PORT); undefined in mode dev, whose HTTP port serves them. */
  opsUrl?: string
  stop(): Promise<void>
}

export async function startRunner(options: RunnerOptions): Promise<RunningRunner> {
  const functions = options.functions ?? []
  functions.forEach((fn, i) => {
    if (!isSluiceFunction(fn))
      throw new TypeError(`startRunner({ functions }): functions[${i}] is not made by client.createFunction`)
    if (fn.appId !== options.client.id)
      throw new TypeError(
        `startRunner({ functions }): functions[${i}] belongs to app "${fn.appId}", not to the client's app "${options.client.id}"`,
      )
  })
  const config = loadConfig(options.mode ?? 'start', options.flags ?? {})
  checkRunnerConfig(config, functions.length > 0)
  // Loaded on demand, as by the CLI: the stages, RocksDB and the Kafka clients.
  const { startSluice } = await import('./start.ts')
  const running: Running = await startSluice(runnerConfig(config), createLogger(config.logLevel), { functions })
  return { url: running.url, opsUrl: running.opsUrl, stop: () => running.stop() }
}
