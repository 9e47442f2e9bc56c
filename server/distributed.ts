// Composition root of the distributed mode: the roles named by --role on Kafka (the log, the
// control plane's compacted topic, dedup changelogs) and ClickHouse (events, runs, webhook
// requests). A local RocksDB in --data-dir holds only state restored from Kafka changelogs:
// dedup partitions, and runner marks and parked retries.
import { hostname } from 'node:os'
import type { Logger } from 'pino'
import { SluiceError } from '../core/errors.ts'
import type { Rocks } from '../core/rocks.ts'
import { createKafkaBus } from '../bus/kafka.ts'
import { kafkaClients } from '../bus/kafka-clients.ts'
import { functionStateTopic, topicNames } from '../bus/topics.ts'
import { jsonCodec } from '../bus/codec.ts'
import { createAvroCodecs } from '../bus/avro.ts'
import { eventSchemaRegistry } from '../control/schemas-registry.ts'
import { createTopicControlStore } from '../control/topic.ts'
import { createClickHouseStores } from '../store/clickhouse.ts'
import { createClickHouseInsights } from '../store/clickhouse-insights.ts'
import { openChangelogDedupStore } from '../dedup/changelog.ts'
import { openChangelogRunnerState } from '../runner/changelog.ts'
import { openChangelogWaitStore } from '../router/waits-changelog.ts'
import type { SluiceFunction } from '../client/function.ts'
import type { EventStore } from '../store/types.ts'
import { compose, run, ROLES, type Adapters, type Role, type Running } from './compose.ts'
import { plainEventPath } from './event-path.ts'
import type { Config } from '../config/config.ts'
import { settingLabel } from '../config/settings.ts'
import { instanceIdOf } from './instance-id.ts'
import { clickhouseConnection, insightsLimits, kafkaSecurity, redactUrl, registryAuth } from './connections.ts'
import type { Probe } from '../core/health.ts'

const NEEDS_STORE: Role[] = ['sink', 'api', 'transformer']

/** `rocks`: the data dir's RocksDB, opened by server.ts before it loads this module (a data dir in use fails at once). */
export async function startDistributed(
  config: Config,
  log: Logger,
  options: { functions?: SluiceFunction[]; rocks: Rocks },
): Promise<Running> {
  const roles = new Set<Role>(config.roles.includes('all') ? ROLES : (config.roles as Role[]))
  if (!config.clickhouseUrl && NEEDS_STORE.some((r) => roles.has(r))) {
    throw new SluiceError(
      'CONFIG_INVALID',
      `${settingLabel('clickhouseUrl')}: the roles ${NEEDS_STORE.filter((r) => roles.has(r)).join(', ')} need ClickHouse`,
    )
  }
  const rocks = options.rocks
  const bus = await createKafkaBus(
    kafkaClients[config.kafkaClient],
    {
      brokers: config.kafkaBrokers,
      clientId: `sluice-${hostname()}-${process.pid}`,
      sessionTimeoutMs: config.kafkaSessionTimeoutMs,
      heartbeatIntervalMs: config.kafkaHeartbeatIntervalMs,
      instanceId: await instanceIdOf(config.dataDir),
      compression: config.kafkaCompression,
      groupPrefix: `${config.topicPrefix}.`,
      ...kafkaSecurity(config),
    },
    log.child({ component: 'kafka' }),
  )
  const topics = topicNames(config.topicPrefix)
  const partitions = { partitions: config.partitions }
  await bus.ensureTopics({
    [topics.raw]: partitions,
    [topics.rawSlow]: partitions,
    [topics.incoming]: partitions,
    [topics.events]: partitions,
    [topics.duplicates]: partitions,
    [topics.runs]: partitions,
    [topics.waits]: partitions,
    [topics.waitKeys]: { partitions: 1, compacted: true },
    // Compacted only: a wait may stay open a year, and each is tombstoned when it ends.
    [topics.waitsState]: { partitions: config.partitions, compacted: true },
    // Same partition count as incoming: a dedup partition's changelog is the same partition number.
    [topics.dedupChangelog]: { partitions: config.partitions, compacted: true, retentionMs: 2 * config.dedupWindowMs },
    [topics.control]: { partitions: 1, compacted: true },
  })
  const control = await createTopicControlStore(bus, topics.control, log.child({ component: 'control' }))
  const clickhouse = config.clickhouseUrl
    ? await createClickHouseStores(clickhouseConnection(config), log.child({ component: 'clickhouse' }))
    : undefined
  // The Insights SQL console's own client (readonly, the database as default): only where the api role serves it.
  const insights =
    clickhouse && roles.has('api')
      ? await createClickHouseInsights(
          clickhouseConnection(config),
          insightsLimits(config),
          log.child({ component: 'insights' }),
        )
      : undefined
  // Avro on the topics other Kafka consumers read (docs/avro.md); runs stay JSON.
  const avroConfig = { schemaRegistryUrl: config.schemaRegistryUrl, schemaRegistryAuth: registryAuth(config), topics }
  const avro = await createAvroCodecs(avroConfig, log.child({ component: 'avro' }))
  const events = clickhouse?.events ?? withoutClickHouse<EventStore>()
  const schemaRegistry =
    config.schemaRegistryUrl === undefined
      ? undefined
      : eventSchemaRegistry({
          url: config.schemaRegistryUrl,
          auth: registryAuth(config),
          subjectPrefix: config.topicPrefix,
        })
  /** The runner state topics created (or being created), by name. */
  const stateTopics = new Map<string, Promise<void>>()
  const adapters: Adapters = {
    bus,
    schemaRegistry,
    topics,
    control,
    events,
    runs: clickhouse?.runs ?? withoutClickHouse(),
    requests: clickhouse?.requests ?? withoutClickHouse(),
    insights: insights ?? withoutClickHouse(),
    retention: clickhouse?.retention ?? { expire: async () => {} },
    erasure: clickhouse?.erasure ?? withoutClickHouse(),
    audit: clickhouse?.audit ?? withoutClickHouse(),
    codecs: { ...avro, run: jsonCodec() },
    eventPath: plainEventPath(bus, events),
    openDedupStore: (partition) =>
      openChangelogDedupStore({
        rocks,
        bus,
        topic: topics.dedupChangelog,
        partition,
        windowMs: config.dedupWindowMs,
        log,
      }),
    openWaitStore: (partition) => openChangelogWaitStore({ rocks, bus, topic: topics.waitsState, partition, log }),
    openRunnerState: async (scope, partition) => {
      // Kept beside the function's topic, with its partition count; marks age out of it as they expire.
      const topic = functionStateTopic(topics, scope)
      const retentionMs = config.functionMarkRetentionMs + 24 * 60 * 60_000
      // A function's partitions restore at once: one creation of their topic, not one per partition.
      let ensured = stateTopics.get(topic)
      if (!ensured) {
        ensured = bus.ensureTopics({ [topic]: { partitions: config.partitions, compacted: true, retentionMs } })
        stateTopics.set(topic, ensured)
        ensured.catch(() => stateTopics.delete(topic))
      }
      await ensured
      return openChangelogRunnerState({ rocks, bus, topic, scope, partition, retentionMs, log })
    },
  }
  const parts = compose(adapters, config, log, {
    roles,
    functions: options.functions ?? [],
    functionScope: { kind: 'served-apps' },
  })
  const probes: Record<string, Probe> = {
    kafka: async () => ((await bus.reachable()) ? undefined : 'not reachable'),
    'kafka groups': async () => {
      const out = bus.outOfGroup()
      return out.length === 0 ? undefined : `out of group: ${out.join(', ')}`
    },
    // Only where a role reads or writes the store: ClickHouse away must not take ingest or a runner out of service.
    ...(clickhouse &&
      NEEDS_STORE.some((r) => roles.has(r)) && {
        clickhouse: async () => ((await clickhouse.reachable()) ? clickhouse.writeFailure() : 'not reachable'),
      }),
  }
  const upFields = {
    roles: [...roles],
    kafka: config.kafkaBrokers,
    kafkaClient: config.kafkaClient,
    clickhouse: redactUrl(config.clickhouseUrl),
  }
  return run(config, log, parts, upFields, {
    probes,
    async closeAdapters() {
      await control.close()
      await bus.close()
      await insights?.close()
      await clickhouse?.close()
      await rocks.close()
    },
  })
}

/** Stands in for a store on a node whose roles never read or write it (checked above). */
function withoutClickHouse<T extends object>(): T {
  const refuse = () =>
    Promise.reject(
      new SluiceError('CONFIG_INVALID', `${settingLabel('clickhouseUrl')}: this node has no ClickHouse for its roles`),
    )
  return new Proxy({} as T, { get: (_target, method) => (method === 'close' ? async () => {} : refuse) })
}
