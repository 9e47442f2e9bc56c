// Composition root of the embedded mode: one process, one RocksDB, every stage.
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { openRocks } from '../core/rocks.ts'
import type { EventRecord, StoredEvent } from '../core/event.ts'
import { createLocalBus } from '../bus/local.ts'
import { topicNames } from '../bus/topics.ts'
import { jsonCodec } from '../bus/codec.ts'
import { createOutput } from '../bus/output.ts'
import { createRocksControlStore } from '../control/rocksdb.ts'
import { createEnvs } from '../control/envs.ts'
import { createKeys } from '../control/keys.ts'
import { createRocksEventStore } from '../store/rocksdb.ts'
import { createStoreSink } from '../store/index.ts'
import { createRocksDedupStore } from '../dedup/rocksdb.ts'
import { createDedup } from '../dedup/index.ts'
import { createIngest } from '../ingest/index.ts'
import { createApi } from '../api/index.ts'
import { createHttpServer } from '../api/http.ts'
import { dashboardRoutes } from '../api/dashboard.ts'
import type { SluiceFunction } from '../client/function.ts'
import { createEmbeddedFunctions } from './embedded-functions.ts'
import { createEmbeddedWebhooks } from './embedded-webhooks.ts'
import type { Config } from './config.ts'

export interface Running { url: string; routes: string[]; stop(): Promise<void> }

/** `functions`: served besides those of `config.functionsFile` (startRunner passes them in code). */
export async function startEmbedded(config: Config, log: Logger, options: { functions?: SluiceFunction[] } = {}): Promise<Running> {
  await mkdir(config.dataDir, { recursive: true })
  const rocks = await openRocks(join(config.dataDir, 'db'))
  const bus = createLocalBus(rocks, log.child({ component: 'bus' }), { maxBatchRecords: 1000, retentionCheckMs: 30_000 })
  const topics = topicNames(config.topicPrefix)
  const partitions = { partitions: config.partitions }
  await bus.ensureTopics({ [topics.raw]: partitions, [topics.incoming]: partitions, [topics.events]: partitions, [topics.duplicates]: partitions, [topics.runs]: partitions })

  const control = await createRocksControlStore(rocks)
  const envs = createEnvs(control)
  const keys = createKeys(control, envs)
  const events = createRocksEventStore(rocks)
  const eventCodec = jsonCodec<EventRecord>()
  const storedCodec = jsonCodec<StoredEvent>()
  const incoming = createOutput(bus, topics.incoming, eventCodec, (e) => `${e.env}\0${e.id}`)

  const dedupStore = createRocksDedupStore(rocks, { windowMs: config.dedupWindowMs })
  const stages = [
    createStoreSink({ bus, codec: storedCodec, store: events, log }, { group: 'store-sink', topics: [topics.events, topics.duplicates], maxBatchRecords: 2000 }),
    createDedup(
      {
        bus,
        codec: eventCodec,
        outputs: {
          events: createOutput(bus, topics.events, eventCodec, (e) => e.internalId),
          duplicates: createOutput(bus, topics.duplicates, storedCodec, (e) => e.internalId),
        },
        openStore: async () => dedupStore,
        log: log.child({ stage: 'dedup' }),
      },
      { inputTopic: topics.incoming, group: 'dedup', expireIntervalMs: 60_000 },
    ),
  ]
  const functions = createEmbeddedFunctions(
    { rocks, bus, control, envs, topics, incoming, log },
    { partitions: config.partitions, eventLimits: config, functionsFile: config.functionsFile, watch: config.watch, functions: options.functions },
  )
  stages.push(...functions.stages)
  const webhooks = createEmbeddedWebhooks({ rocks, bus, control, envs, topics, incoming, log }, config)
  stages.push(webhooks.stage)
  const ingest = createIngest({ keys, envs, outputs: { incoming }, webhooks: webhooks.ingest, log: log.child({ stage: 'ingest' }) }, { ...config, devMode: config.mode === 'dev' })
  const api = createApi({ keys, envs, events, log, extraRoutes: [...functions.routes, ...webhooks.routes] }, { devMode: config.mode === 'dev', signingKey: config.signingKey })
  const http = createHttpServer({ host: config.host, port: config.port, trustProxy: config.trustProxy.length ? config.trustProxy : false }, log, [ingest.routes, api.routes, dashboardRoutes])

  for (const stage of stages) await stage.start()
  const url = await http.start()
  log.info({ url, dataDir: config.dataDir, mode: config.mode }, 'sluice is up')
  return {
    url,
    routes: http.routes(),
    async stop() {
      await http.stop()
      for (const stage of stages.reverse()) await stage.stop()
      await bus.close()
      await events.close()
      await control.close()
      await rocks.close()
    },
  }
}
