// A process that serves functions: `sluice runner --functions FILE` and `startRunner(…)`.
// In the embedded mode the log is the local RocksDB of this process, so a runner process is a
// whole single-node Sluice serving those functions. Against Kafka it plays the runner role only.
import { SluiceError } from '../core/errors.ts'
import type { SluiceFunction } from '../client/function.ts'
import { loadConfig, type Config, type Flags } from './config.ts'
import { createLogger } from './log.ts'
import type { Running } from './embedded.ts'
import { startSluice } from './server.ts'

export function checkRunnerConfig(config: Config, functionsGiven: boolean): void {
  if (!functionsGiven && !config.functionsFile)
    throw new SluiceError(
      'CONFIG_INVALID',
      'functionsFile (--functions / SLUICE_FUNCTIONS): sluice runner needs the module that exports the functions',
    )
}

export async function startRunnerProcess(
  functions: SluiceFunction[],
  flags: Flags,
  mode: 'dev' | 'start',
): Promise<Running> {
  const config = loadConfig(mode, flags)
  checkRunnerConfig(config, functions.length > 0)
  return startSluice(runnerConfig(config), createLogger(config.logLevel), { functions })
}

/** Against Kafka a runner process plays the runner role only; embedded, it is a whole node. */
export function runnerConfig(config: Config): Config {
  return config.kafkaBrokers.length > 0 ? Object.freeze({ ...config, roles: ['runner' as const] }) : config
}
