// Wires the stages of the roles a process plays onto the adapters it was given, and runs them
// (core/lifecycle.ts). Both composition roots use it: embedded (RocksDB adapters, every role) and
// distributed (Kafka and ClickHouse adapters, the roles named by --role).
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Logger } from 'pino'
import type { Bus } from '../bus/types.ts'
import type { Codec } from '../bus/codec.ts'
import { createOutput } from '../bus/output.ts'
import { asRead, type Consumed } from '../bus/source.ts'
import { watchConsumerLag } from '../bus/metrics.ts'
import type { TopicNames } from '../bus/topics.ts'
import type { EventInput, EventRecord, StoredEvent } from '../core/event.ts'
import type { RawWebhookRequest } from '../core/raw-request.ts'
import type { ControlStore } from '../control/types.ts'
import { createEnvs } from '../control/envs.ts'
import { createKeys } from '../control/keys.ts'
import { createSchemas } from '../control/schemas.ts'
import { createSchemaCheck } from '../control/schema-check.ts'
import type { EventSchemaRegistry } from '../control/schemas-registry.ts'
import type { EventStore } from '../store/types.ts'
import type { RunStore, RunDoc } from '../store/runs-types.ts'
import type { WebhookRequestStore } from '../store/requests-types.ts'
import type { InsightsStore } from '../store/insights-types.ts'
import type { RetentionStore } from '../store/retention-types.ts'
import type { ErasureStore } from '../store/erasure-types.ts'
import { erasureRoutes } from '../api/erasures.ts'
import { backupRoutes, type MakeBackup } from '../api/backups.ts'
import { createErasureWorker } from '../api/erasure-worker.ts'
import { retentionPlan } from '../control/retention.ts'
import { createStoreSink } from '../store/index.ts'
import type { DedupStore } from '../dedup/types.ts'
import { createDedup } from '../dedup/index.ts'
import type { RunnerState } from '../runner/state.ts'
import type { WaitStore } from '../router/waits-store.ts'
import type { SyncScope } from '../control/functions.ts'
import type { SluiceFunction } from '../client/function.ts'
import { createIngest } from '../ingest/index.ts'
import { createApi } from '../api/index.ts'
import { dashboardRoutes } from '../api/dashboard.ts'
import { eventsStreamRoutes } from '../api/events-stream.ts'
import { eventReplayRoutes } from '../api/events-replay.ts'
import { insightsRoutes } from '../api/insights.ts'
import { eventSchemaRoutes } from '../api/event-schemas.ts'
import { schemaTrafficRoutes } from '../api/schema-traffic.ts'
import { createHttpServer, type RoutePlugin } from '../api/http.ts'
import { createFunctionParts } from './parts-functions.ts'
import { createWebhookParts } from './parts-webhooks.ts'
import { createAlertParts } from './parts-alerts.ts'
import type { Config } from '../config/config.ts'
import type { EventPath } from './event-path.ts'
import { createHealth, type Health, type OpsRoute, type Probe } from '../core/health.ts'
import { runProcess, type Stage } from '../core/lifecycle.ts'
import { serveMetrics } from '../core/metrics-route.ts'
import { createOpsServer } from '../api/ops-server.ts'
import { signingKeyGuard } from '../api/auth.ts'
import { createTokens } from '../control/tokens.ts'
import { createUsers } from '../control/users.ts'
import { oidcSettingsOf } from '../api/oidc.ts'
import type { AuditStore } from '../store/audit-types.ts'
import { meRoute, tokensRoutes } from '../api/tokens.ts'
import { auditRoutes } from '../api/audit.ts'

/** How often the wait matcher forgets waits that timed out (they no longer match; this frees their space). */
const WAITS_EXPIRE_INTERVAL_MS = 60_000

export const ROLES = ['ingest', 'transformer', 'dedup', 'router', 'sink', 'runner', 'api'] as const
export type Role = (typeof ROLES)[number]

export interface Adapters {
  bus: Bus
  topics: TopicNames
  control: ControlStore
  events: EventStore
  runs: RunStore
  requests: WebhookRequestStore
  /** Deletes what each environment's retention lets go (store/retention-types.ts). */
  retention: RetentionStore
  /** Finds and deletes what an erasure names (store/erasure-types.ts). */
  erasure: ErasureStore
  /** Who changed what through the REST API (store/audit-types.ts). */
  audit: AuditStore
  /** Aggregates for the dashboard, and SQL in distributed mode (read by the api role). */
  insights: InsightsStore
  codecs: { event: Codec<EventRecord>; stored: Codec<StoredEvent>; raw: Codec<RawWebhookRequest>; run: Codec<RunDoc> }
  /** How ingest, dedup, the store sink and the router meet the bus and the event store. */
  eventPath: EventPath
  /** State of one partition of `incoming` (restored from its changelog in distributed mode). */
  openDedupStore(partition: number): Promise<DedupStore>
  openRunnerState(scope: string, partition: number): Promise<RunnerState>
  /** State of one partition of `waits` (restored from its changelog in distributed mode). */
  openWaitStore(partition: number): Promise<WaitStore>
  /** Distributed mode with a schema registry: where event schema versions are checked and kept. */
  schemaRegistry?: EventSchemaRegistry
  /** Embedded mode: a backup of the data dir (server/backup.ts); distributed roles have none. */
  backup?: MakeBackup
}

export interface ComposeOptions {
  roles: ReadonlySet<Role>
  functions: SluiceFunction[]
  /** Which registered functions this process's served set replaces (see control/functions.ts). */
  functionScope: SyncScope
}

export interface Parts {
  stages: Stage[]
  http: RoutePlugin[]
  health: Health
  /** The roles played, as the sluice_info metric shows them. */
  roles: Role[]
}

/** Stages in start order, and the HTTP routes of the ingest and api roles. */
export function compose(adapters: Adapters, config: Config, log: Logger, options: ComposeOptions): Parts {
  const health = createHealth()
  // Not ready while a partition's state is being restored (after a start or a rebalance).
  const given = adapters
  adapters = {
    ...given,
    openDedupStore: (partition) => health.track('dedup partitions restoring', given.openDedupStore(partition)),
    openRunnerState: (scope, partition) =>
      health.track('runner partitions restoring', given.openRunnerState(scope, partition)),
    openWaitStore: (partition) => health.track('wait partitions restoring', given.openWaitStore(partition)),
  }
  const { bus, topics, codecs, eventPath, roles } = { ...adapters, roles: options.roles }
  const envs = createEnvs(adapters.control)
  const keys = createKeys(adapters.control, envs)
  const tokens = createTokens(adapters.control, envs)
  const users = createUsers(adapters.control, envs)
  const schemas = createSchemas(adapters.control, envs, config, adapters.schemaRegistry)
  const checkEvents = createSchemaCheck(schemas, envs)
  const checkSent = (env: string, events: readonly EventInput[], where: (i: number) => string) => {
    const doc = envs.get(env)
    return doc ? checkEvents(doc, events, where) : ({ kind: 'ok' } as const)
  }
  const incomingKey = (e: EventRecord) => `${e.env}\0${e.id}`
  // Embedded mode: one pass does what dedup, the store sink and the router do to what is published.
  const onePass = eventPath.onePass?.(() => (roles.has('router') ? functions.routing : undefined))
  const incoming = onePass ?? createOutput(bus, topics.incoming, codecs.event, incomingKey)
  const functions = createFunctionParts(
    {
      bus,
      control: adapters.control,
      envs,
      topics,
      incoming,
      checkSent,
      runStore: adapters.runs,
      events: adapters.events,
      runCodec: codecs.run,
      eventSource: eventPath.source(codecs.event),
      openRunnerState: adapters.openRunnerState,
      openWaitStore: adapters.openWaitStore,
      log,
    },
    {
      partitions: config.partitions,
      eventLimits: config,
      functionsFile: config.functionsFile,
      watch: config.watch,
      functions: options.functions,
      scope: options.functionScope,
      batchRecords: {
        runner: config.runnerBatchRecords,
        runSink: config.runSinkBatchRecords,
        router: config.routerBatchRecords,
      },
      markRetentionMs: config.functionMarkRetentionMs,
      waitsExpireIntervalMs: WAITS_EXPIRE_INTERVAL_MS,
      apps: {
        devMode: config.mode === 'dev',
        signingKey: config.signingKey,
        urls: config.appUrls,
        allowedHosts: config.appHosts,
        connectTimeoutMs: config.appConnectTimeoutMs,
        maxResponseBytes: config.appMaxResponseBytes,
      },
    },
  )
  const webhooks = createWebhookParts(
    {
      bus,
      control: adapters.control,
      envs,
      topics,
      incoming,
      checkEvents,
      requests: adapters.requests,
      rawCodec: codecs.raw,
      log,
    },
    config,
  )
  // Stopped last (stages stop in reverse): the sandbox outlives the transformer and the api.
  const stages: Stage[] = [{ start: async () => {}, stop: () => webhooks.close() }]
  // Consumer lag is read from the bus at each scrape, while the consumers run.
  let unwatchLag: (() => void) | undefined
  stages.push({
    start: async () => {
      unwatchLag = watchConsumerLag(bus)
    },
    stop: async () => unwatchLag?.(),
  })
  const http: RoutePlugin[] = []
  if (roles.has('sink')) {
    stages.push(
      createStoreSink(
        {
          source: eventPath.source(codecs.stored),
          insert: (events, records) => eventPath.insertEvents(events, records),
          retention: adapters.retention,
          // The server's default keeps runs and webhook requests; an environment may keep less.
          retentionPlan: () =>
            retentionPlan(envs.list(), { events: config.eventRetentionMs, runs: 0, requests: 0 }, Date.now()),
          log: log.child({ stage: 'sink' }),
        },
        {
          group: 'store-sink',
          topics: [topics.events, topics.duplicates],
          maxBatchRecords: config.storeBatchRecords,
        },
      ),
    )
    stages.push(functions.runSink)
  }
  if (roles.has('dedup')) {
    stages.push(
      createDedup(
        {
          source: eventPath.source(codecs.event),
          outputs: {
            // Accepted events go on as the bytes they were read as (`incoming` and `events` share the event codec).
            events: eventPath.output(
              topics.events,
              asRead,
              (e: Consumed<EventRecord>) => e.value.internalId,
              (e) => e.value,
            ),
            duplicates: createOutput(bus, topics.duplicates, codecs.stored, (e) => e.internalId),
          },
          openStore: adapters.openDedupStore,
          log: log.child({ stage: 'dedup' }),
        },
        { inputTopic: topics.incoming, group: 'dedup', expireIntervalMs: config.dedupExpireIntervalMs },
      ),
    )
  }
  if (roles.has('transformer')) stages.push(webhooks.transformer)
  if (roles.has('runner')) stages.push(functions.runners)
  if (roles.has('router')) stages.push(functions.matcher, functions.router)
  if (roles.has('ingest')) {
    const pipeline = [topics.incoming, topics.events, topics.duplicates]
    const settle = eventPath.settle && (() => eventPath.settle!(pipeline))
    http.push(
      createIngest(
        {
          keys,
          envs,
          // The Event API's records are parsed JSON and fields, never changed once published: they may be shared.
          outputs: { incoming: onePass ?? eventPath.output(topics.incoming, codecs.event, incomingKey, (e) => e) },
          checkEvents,
          webhooks: webhooks.ingest,
          settle,
          log: log.child({ stage: 'ingest' }),
        },
        { ...config, devMode: config.mode === 'dev' },
      ).routes,
    )
  }
  if (roles.has('api')) {
    stages.push({ start: () => functions.bulk.start(), stop: () => functions.bulk.stop() })
    stages.push(functions.appSync)
    stages.push(createErasureWorker({ control: adapters.control, erasure: adapters.erasure, log }))
    http.push(functions.registerRoute)
    const eventRoutes = [
      eventsStreamRoutes({ events: adapters.events }),
      eventReplayRoutes({ events: adapters.events, incoming }),
      insightsRoutes({ insights: adapters.insights, envs, webhooks: { list: () => adapters.control.list('webhook') } }),
      eventSchemaRoutes({ schemas }),
      schemaTrafficRoutes({ schemas, events: adapters.events, insights: adapters.insights }),
    ]
    const alerts = createAlertParts(
      {
        control: adapters.control,
        webhooks: webhooks.webhooks,
        requests: adapters.requests,
        runs: adapters.runs,
        incoming,
        log,
      },
      config,
    )
    stages.push(alerts.evaluator)
    const privacy = erasureRoutes({ control: adapters.control, envs })
    const backups = backupRoutes({ backup: adapters.backup })
    const extraRoutes = [...eventRoutes, ...functions.routes, ...webhooks.routes, alerts.routes, privacy, backups]
    http.push(
      createApi(
        {
          keys,
          tokens,
          users,
          control: adapters.control,
          envs,
          events: adapters.events,
          log,
          audit: adapters.audit,
          extraRoutes: [...extraRoutes, tokensRoutes({ tokens }), meRoute(), auditRoutes({ audit: adapters.audit })],
        },
        { devMode: config.mode === 'dev', signingKey: config.signingKey, oidc: oidcSettingsOf(config) },
      ).routes,
    )
    http.push(dashboardRoutes)
  }
  return { stages, http, health, roles: [...roles] }
}

export interface Running {
  url: string
  /** The ops listener's URL (/healthz, /readyz, /metrics): every process but sluice dev's. */
  opsUrl?: string
  routes: string[]
  /** A request through the server's routes without a socket (fastify's inject), for tests that send thousands. */
  inject(options: InjectOptions): Promise<LightMyRequestResponse>
  stop(): Promise<void>
}

export interface RunOptions {
  /** Readiness probes of the process's connections (Kafka, ClickHouse). */
  probes?: Record<string, Probe>
  closeAdapters(): Promise<void>
}

/**
 * Builds the process's listeners and runs the parts' stages under them (core/lifecycle.ts): HTTP with
 * /healthz and /readyz when it serves an HTTP role, and the ops listener on --ops-port with /metrics
 * too. sluice dev is one port: the HTTP one serves /metrics, and there is no ops listener.
 */
export async function run(
  config: Config,
  log: Logger,
  parts: Parts,
  upFields: object,
  options: RunOptions,
): Promise<Running> {
  const health = parts.health
  for (const [name, probe] of Object.entries(options.probes ?? {})) health.addProbe(name, probe)
  const metrics = serveMetrics(parts.roles, health.routes['/readyz'])
  const opsRoutes = { ...health.routes, '/metrics': metrics.route }
  const trustProxy = config.trustProxy.length ? config.trustProxy : false
  const devServer = config.mode === 'dev' && parts.http.length > 0
  const metricsOnHttp = devServer || config.metricsListener !== 'ops'
  const signed = !devServer && config.metricsListener === 'http-signed'
  const http =
    parts.http.length > 0
      ? createHttpServer(
          {
            host: config.host,
            port: config.port,
            trustProxy,
            eventLimits: config,
            limits: config,
            // The dev server's REST API is open, so a page must not reach it by a rebound name.
            ...(config.mode === 'dev' && { allowedHosts: config.allowedHosts }),
          },
          log,
          metricsOnHttp
            ? [...parts.http, metricsRoute(metrics.route, signed ? config.signingKey : undefined)]
            : parts.http,
          health.routes,
        )
      : undefined
  const ops = devServer ? undefined : createOpsServer({ host: config.host, port: config.opsPort }, opsRoutes)
  const running = await runProcess(
    {
      http,
      ops,
      stages: parts.stages,
      health,
      closeAdapters: options.closeAdapters,
      shutdownDelayMs: config.shutdownDelayMs,
      onExit: metrics.stop,
    },
    log,
    upFields,
  )
  return {
    url: running.url,
    opsUrl: running.opsUrl,
    routes: http?.routes() ?? Object.keys(opsRoutes).map((path) => `GET ${path}`),
    inject: (options) => {
      if (!http) throw new Error('inject: this process serves no HTTP role')
      return http.app.inject(options)
    },
    stop: running.stop,
  }
}

/** GET /metrics on the HTTP port; with `signingKey`, only for `Authorization: Bearer <signing key>`. */
function metricsRoute(route: OpsRoute, signingKey: string | undefined): RoutePlugin {
  return async (app) => {
    const guard = signingKey === undefined ? undefined : signingKeyGuard(false, signingKey)
    app.get('/metrics', guard ? { onRequest: guard } : {}, async (_request, reply) => {
      const answer = await route()
      return reply.code(answer.status).type(answer.contentType).send(answer.body)
    })
  }
}
