// A process that serves functions: `sluice runner --functions FILE` and `startRunner(…)`.
// In the embedded mode the log is the local RocksDB of this process, so a runner process is a
// whole single-node Sluice serving those functions. Against Kafka, the runner role alone runs,
// on the same runner stages, once the distributed composition root provides its adapters.
import { SluiceError } from '../core/errors.ts'
import type { SluiceFunction } from '../client/function.ts'
import { loadConfig, type Config, type Flags } from './config.ts'
import { createLogger } from './log.ts'
import { startEmbedded, type Running } from './embedded.ts'

export function checkRunnerConfig(config: Config, functionsGiven: boolean): void {
  if (!functionsGiven && !config.functionsFile) throw new SluiceError('CONFIG_INVALID', 'functionsFile (--functions / SLUICE_FUNCTIONS): sluice runner needs the module that exports the functions')
  if (config.kafkaBrokers.length > 0) {
    throw new SluiceError('CONFIG_INVALID', 'kafkaBrokers (SLUICE_KAFKA_BROKERS): this build serves functions in the embedded mode only; unset it, or use sluice dev/start --functions')
  }
}

export async function startRunnerProcess(functions: SluiceFunction[], flags: Flags, mode: 'dev' | 'start'): Promise<Running> {
  const config = loadConfig(mode, flags)
  checkRunnerConfig(config, functions.length > 0)
  return startEmbedded(config, createLogger(config.logLevel), { functions })
}
