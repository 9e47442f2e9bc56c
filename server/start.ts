// Picks the composition root: distributed when Kafka is configured, embedded otherwise.
// Loaded on demand by the CLI, so control commands start fast and never load kafkajs.
import { makeDirDurable } from '../core/wal-sync.ts'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { openRocks } from '../core/rocks.ts'
import type { SluiceFunction } from '../client/function.ts'
import { type Config, rocksOptionsOf } from '../config/config.ts'
import type { Running } from './embedded.ts'
import { checkPortFree } from '../api/ops-server.ts'

export async function startSluice(
  config: Config,
  log: Logger,
  options: { functions?: SluiceFunction[] } = {},
): Promise<Running> {
  const distributed = config.kafkaBrokers.length > 0
  // Before loading the stages and the Kafka and ClickHouse clients (seconds on a busy machine): a
  // port or a data dir in use by another process fails the start at once.
  const httpRole = !distributed || config.roles.some((role) => role === 'all' || role === 'ingest' || role === 'api')
  if (httpRole) await checkPortFree(config.host, config.port, 'port (--port / SLUICE_PORT)')
  // Every process but sluice dev's (which serves the probes on its HTTP port) has the ops listener.
  if (!httpRole || config.mode !== 'dev')
    await checkPortFree(config.host, config.opsPort, 'opsPort (--ops-port / SLUICE_OPS_PORT)')
  await makeDirDurable(config.dataDir)
  const rocks = await openRocks(join(config.dataDir, 'db'), rocksOptionsOf(config), log)
  if (distributed) {
    const { startDistributed } = await import('./distributed.ts')
    return startDistributed(config, log, { ...options, rocks })
  }
  const { startEmbedded } = await import('./embedded.ts')
  return startEmbedded(config, log, { ...options, rocks })
}
