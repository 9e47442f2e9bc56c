// Composition root of the embedded mode: one process, one RocksDB, every role.
import { makeDirDurable } from '../core/wal-sync.ts'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { openRocks, type Rocks } from '../core/rocks.ts'
import { createLocalBus, type LocalLog } from '../bus/local.ts'
import { topicNames } from '../bus/topics.ts'
import { jsonCodec } from '../bus/codec.ts'
import { createRocksControlStore } from '../control/rocksdb.ts'
import { createRocksEventStore, type RocksEventStore } from '../store/rocksdb.ts'
import { createRocksRunStore } from '../store/runs-rocksdb.ts'
import { createRocksRequestStore } from '../store/requests-rocksdb.ts'
import { expireEmbedded } from '../store/rocksdb-expire.ts'
import { createRocksErasure } from '../store/rocksdb-erasure.ts'
import { createRocksAuditStore } from '../store/audit-rocksdb.ts'
import { createRocksInsights } from '../store/insights-rocksdb.ts'
import { createRocksDedupStore } from '../dedup/rocksdb.ts'
import { createRocksRunnerState } from '../runner/rocksdb.ts'
import { createRocksWaitStore } from '../router/waits-rocksdb.ts'
import type { SluiceFunction } from '../client/function.ts'
import { compose, run, ROLES, type Adapters, type Running } from './compose.ts'
import { type Config, rocksOptionsOf } from '../config/config.ts'
import { plainEventPath, type EventPath } from './event-path.ts'
import { createOnePass } from '../one-pass/index.ts'
import type { RoutePlugin } from '../api/http.ts'
import { backupMaker } from './backup.ts'

export type { Running }

/**
 * `functions`: served besides those of `config.functionsFile` (startRunner passes them in code).
 * `httpPlugins`: registered before the routes (tests check every response against its schema).
 * `rocks`: the data dir's RocksDB when the caller opened it already (server.ts does).
 */
export async function startEmbedded(
  config: Config,
  log: Logger,
  options: { functions?: SluiceFunction[]; httpPlugins?: RoutePlugin[]; rocks?: Rocks } = {},
): Promise<Running> {
  await makeDirDurable(config.dataDir)
  const rocks = options.rocks ?? (await openRocks(join(config.dataDir, 'db'), rocksOptionsOf(config), log))
  const bus = createLocalBus(rocks, log.child({ component: 'bus' }), {
    maxBatchRecords: config.localLogBatchRecords,
    retentionCheckMs: config.localLogRetentionCheckMs,
    lingerMs: config.localLogLingerMs,
    tailBytes: config.localLogTailBytes,
  })
  const topics = topicNames(config.topicPrefix)
  // One process: partitions of the event pipeline's topics would buy no parallelism, and each
  // costs a consumer loop per stage (docs/operations.md). `raw` and the
  // function topics keep SLUICE_PARTITIONS: a transform or run that hangs holds back only its
  // partition, not every other webhook or run.
  const one = { partitions: 1 }
  await bus.ensureTopics({
    [topics.raw]: { partitions: config.partitions },
    [topics.rawSlow]: { partitions: config.partitions },
    [topics.incoming]: one,
    [topics.events]: one,
    [topics.duplicates]: one,
    [topics.runs]: one,
    [topics.waits]: one,
    [topics.waitKeys]: { partitions: 1, compacted: true },
  })
  const waitStore = await createRocksWaitStore(rocks, 'all')
  const runnerStates = new Map<string, ReturnType<typeof createRocksRunnerState>>()
  const dedupStore = createRocksDedupStore(rocks, { windowMs: config.dedupWindowMs })
  const events = createRocksEventStore(rocks)
  const adapters: Adapters = {
    bus,
    topics,
    control: await createRocksControlStore(rocks),
    events,
    runs: createRocksRunStore(rocks),
    requests: createRocksRequestStore(rocks),
    insights: createRocksInsights(rocks),
    retention: { expire: (plan, options) => expireEmbedded(rocks, plan, options) },
    erasure: createRocksErasure(rocks),
    audit: createRocksAuditStore(rocks),
    backup: backupMaker(rocks, config.dataDir, rocksOptionsOf(config)),
    // JSON on the log, so the event store can write each event as the bytes it read (localEventPath).
    codecs: { event: jsonCodec(), stored: jsonCodec(), raw: jsonCodec(), run: jsonCodec() },
    eventPath: {
      ...localEventPath(bus, events, config),
      onePass: (routing) =>
        createOnePass({
          commit: bus.commit,
          writeNow: bus.writeNow,
          getMany: rocks.getMany,
          store: events,
          dedup: dedupStore,
          routing,
        }),
    },
    // One RocksDB holds every partition's state, so one store (and one state per function) serves them all.
    openDedupStore: async () => dedupStore,
    // One state per function, whatever the partition: they share the same keys.
    openRunnerState: async (scope: string) =>
      runnerStates.get(scope) ?? runnerStates.set(scope, createRocksRunnerState(rocks, scope)).get(scope)!,
    openWaitStore: async () => waitStore,
  }
  // This process is the only one serving functions: the registry is exactly what it serves.
  const parts = compose(adapters, config, log, {
    roles: new Set(ROLES),
    functions: options.functions ?? [],
    functionScope: { kind: 'all' },
  })
  const http = [...(options.httpPlugins ?? []), ...parts.http]
  return run(
    config,
    log,
    { ...parts, http },
    { dataDir: config.dataDir, mode: config.mode },
    {
      // Not ready while the log cannot take writes (a full disk): ingest would only answer 503.
      probes: { 'event log': () => bus.writeHealth() },
      async closeAdapters() {
        await bus.close()
        const stores = [adapters.events, adapters.runs, adapters.requests, adapters.insights, adapters.control]
        for (const store of stores) await store.close()
        await rocks.close()
      },
    },
  )
}

/**
 * The event path on the local log: consumers take the Event API's values as published
 * (SLUICE_LOCAL_LOG_SHARE_VALUES), the event store writes the JSON text it read, and ingest waits
 * while a stage is more than SLUICE_LOCAL_LOG_MAX_BACKLOG_RECORDS behind.
 */
function localEventPath(bus: LocalLog, events: RocksEventStore, config: Config): EventPath {
  const { localLogMaxBacklogRecords: limit, localLogBacklogWaitMs: waitMs } = config
  const sharing = config.localLogShareValues
  const plain = plainEventPath(bus, events)
  return {
    output: sharing ? bus.sharedOutput : plain.output,
    source: sharing ? bus.sharedSource : plain.source,
    insertEvents: (stored, records) =>
      events.insertEventTexts(
        stored,
        records.map((r) => r.value),
      ),
    settle: limit > 0 ? (topics) => bus.settle(topics, limit, waitMs) : undefined,
  }
}
