// Wires the stages of the roles a process plays onto the adapters it was given. Both
// composition roots use it: embedded (RocksDB adapters, every role) and distributed (Kafka
// and ClickHouse adapters, the roles named by --role).
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Logger } from 'pino'
import type { Bus } from '../bus/types.ts'
import type { Codec } from '../bus/codec.ts'
import { createOutput } from '../bus/output.ts'
import type { TopicNames } from '../bus/topics.ts'
import type { EventRecord, StoredEvent } from '../core/event.ts'
import type { RawWebhookRequest } from '../core/raw-request.ts'
import type { ControlStore } from '../control/types.ts'
import { createEnvs } from '../control/envs.ts'
import { createKeys } from '../control/keys.ts'
import type { EventStore } from '../store/types.ts'
import type { RunStore, RunDoc } from '../store/runs-types.ts'
import type { WebhookRequestStore } from '../store/requests-types.ts'
import { createStoreSink } from '../store/index.ts'
import type { DedupStore } from '../dedup/types.ts'
import { createDedup } from '../dedup/index.ts'
import type { RunnerState } from '../runner/state.ts'
import type { SyncScope } from '../control/functions.ts'
import type { SluiceFunction } from '../client/function.ts'
import { createIngest } from '../ingest/index.ts'
import { createApi } from '../api/index.ts'
import { dashboardRoutes } from '../api/dashboard.ts'
import { createHttpServer, type RoutePlugin } from '../api/http.ts'
import { createFunctionParts } from './parts-functions.ts'
import { createWebhookParts } from './parts-webhooks.ts'
import type { Config } from './config.ts'

export const ROLES = ['ingest', 'transformer', 'dedup', 'router', 'sink', 'runner', 'api'] as const
export type Role = (typeof ROLES)[number]

export interface Stage { start(): Promise<void>; stop(): Promise<void> }

export interface Adapters {
  bus: Bus
  topics: TopicNames
  control: ControlStore
  events: EventStore
  runs: RunStore
  requests: WebhookRequestStore
  codecs: { event: Codec<EventRecord>; stored: Codec<StoredEvent>; raw: Codec<RawWebhookRequest>; run: Codec<RunDoc> }
  /** State of one partition of `incoming` (restored from its changelog in distributed mode). */
  openDedupStore(partition: number): Promise<DedupStore>
  openRunnerState(scope: string, partition: number): Promise<RunnerState>
}

export interface ComposeOptions {
  roles: ReadonlySet<Role>
  functions: SluiceFunction[]
  /** Which registered functions this process's served set replaces (see control/functions.ts). */
  functionScope: SyncScope
}

/** Stages in start order, and the HTTP routes of the ingest and api roles. */
export function compose(adapters: Adapters, config: Config, log: Logger, options: ComposeOptions): { stages: Stage[]; http: RoutePlugin[] } {
  const { bus, topics, codecs, roles } = { ...adapters, roles: options.roles }
  const envs = createEnvs(adapters.control)
  const keys = createKeys(adapters.control, envs)
  const incoming = createOutput(bus, topics.incoming, codecs.event, (e) => `${e.env}\0${e.id}`)
  const functions = createFunctionParts(
    { bus, control: adapters.control, envs, topics, incoming, runStore: adapters.runs, runCodec: codecs.run, eventCodec: codecs.event, openRunnerState: adapters.openRunnerState, log },
    { partitions: config.partitions, eventLimits: config, functionsFile: config.functionsFile, watch: config.watch, functions: options.functions, scope: options.functionScope },
  )
  const webhooks = createWebhookParts({ bus, control: adapters.control, envs, topics, incoming, requests: adapters.requests, rawCodec: codecs.raw, log }, config)
  // Stopped last (stages stop in reverse): the sandbox outlives the transformer and the api.
  const stages: Stage[] = [{ start: async () => {}, stop: () => webhooks.close() }]
  const http: RoutePlugin[] = []
  if (roles.has('sink')) {
    stages.push(createStoreSink({ bus, codec: codecs.stored, store: adapters.events }, { group: 'store-sink', topics: [topics.events, topics.duplicates], maxBatchRecords: 5000 }))
    stages.push(functions.runSink)
  }
  if (roles.has('dedup')) {
    stages.push(createDedup(
      {
        bus,
        codec: codecs.event,
        outputs: {
          events: createOutput(bus, topics.events, codecs.event, (e) => e.internalId),
          duplicates: createOutput(bus, topics.duplicates, codecs.stored, (e) => e.internalId),
        },
        openStore: adapters.openDedupStore,
        log: log.child({ stage: 'dedup' }),
      },
      { inputTopic: topics.incoming, group: 'dedup', expireIntervalMs: 60_000 },
    ))
  }
  if (roles.has('transformer')) stages.push(webhooks.transformer)
  if (roles.has('runner')) stages.push(functions.runners)
  if (roles.has('router')) stages.push(functions.router)
  if (roles.has('ingest')) {
    http.push(createIngest({ keys, envs, outputs: { incoming }, webhooks: webhooks.ingest, log: log.child({ stage: 'ingest' }) }, { ...config, devMode: config.mode === 'dev' }).routes)
  }
  if (roles.has('api')) {
    http.push(createApi({ keys, envs, events: adapters.events, log, extraRoutes: [...functions.routes, ...webhooks.routes] }, { devMode: config.mode === 'dev', signingKey: config.signingKey }).routes)
    http.push(dashboardRoutes)
  }
  return { stages, http }
}

export interface Running {
  url: string
  routes: string[]
  /** A request through the server's routes without a socket (fastify's inject), for tests that send thousands. */
  inject(options: InjectOptions): Promise<LightMyRequestResponse>
  stop(): Promise<void>
}

/** Starts the stages, then HTTP; stops HTTP, the stages in reverse, then `closeAdapters`. */
export async function run(config: Config, log: Logger, parts: { stages: Stage[]; http: RoutePlugin[] }, upFields: object, closeAdapters: () => Promise<void>): Promise<Running> {
  const http = createHttpServer({
    host: config.host,
    port: config.port,
    trustProxy: config.trustProxy.length ? config.trustProxy : false,
    limits: config,
    // The dev server's REST API is open, so a page must not reach it by a rebound name.
    ...(config.mode === 'dev' && { allowedHosts: config.allowedHosts }),
  }, log, parts.http)
  for (const stage of parts.stages) await stage.start()
  const url = await http.start()
  log.info({ url, ...upFields }, 'sluice is up')
  return {
    url,
    routes: http.routes(),
    inject: (options) => http.app.inject(options),
    async stop() {
      await http.stop()
      for (const stage of [...parts.stages].reverse()) await stage.stop()
      await closeAdapters()
    },
  }
}
