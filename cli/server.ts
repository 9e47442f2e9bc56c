// Picks the composition root: distributed when Kafka is configured, embedded otherwise.
// Loaded on demand by the CLI, so control commands start fast and never load kafkajs.
import type { Logger } from 'pino'
import type { SluiceFunction } from '../client/function.ts'
import type { Config } from './config.ts'
import type { Running } from './embedded.ts'

export async function startSluice(config: Config, log: Logger, options: { functions?: SluiceFunction[] } = {}): Promise<Running> {
  if (config.kafkaBrokers.length > 0) {
    const { startDistributed } = await import('./distributed.ts')
    return startDistributed(config, log, options)
  }
  const { startEmbedded } = await import('./embedded.ts')
  return startEmbedded(config, log, options)
}
