// The functions parts of a composition: run sink, router, and the runners of the functions
// this process serves (from `--functions FILE` or given in code). server/compose.ts picks the
// parts its roles need.
import type { Logger } from 'pino'
import type { Bus } from '../bus/types.ts'
import type { Output } from '../bus/output.ts'
import { createOutput } from '../bus/output.ts'
import type { TopicNames } from '../bus/topics.ts'
import { createFunctionTopics } from '../bus/function-topics.ts'
import type { Codec } from '../bus/codec.ts'
import { createSource, type Source } from '../bus/source.ts'
import type { EventRecord } from '../core/event.ts'
import type { ControlStore } from '../control/types.ts'
import type { Envs } from '../control/envs.ts'
import { createFunctionRegistry, type SyncScope } from '../control/functions.ts'
import type { SluiceFunction } from '../client/function.ts'
import type { RunDoc, RunStore } from '../store/runs-types.ts'
import type { EventStore } from '../store/types.ts'
import { createRunSink } from '../store/runs-sink.ts'
import type { RunnerState } from '../runner/state.ts'
import type { CheckSent, SendLimits } from '../runner/events.ts'
import { createRunner } from '../runner/index.ts'
import { createRouter, createRouting } from '../router/index.ts'
import { routeKeyOf } from '../router/routes.ts'
import { createMatcher } from '../router/matcher.ts'
import { createWaitsTopic } from '../router/waits-topic.ts'
import type { WaitStore } from '../router/waits-store.ts'
import { runsRoutes } from '../api/runs.ts'
import { functionsRoutes } from '../api/functions.ts'
import { functionActionsRoutes } from '../api/function-actions.ts'
import { bulkRoutes } from '../api/bulk.ts'
import { createBulkWorker } from '../api/bulk-worker.ts'
import { runActionsRoutes } from '../api/run-actions.ts'
import { appsRoutes, registerRoute } from '../api/apps.ts'
import { createApps } from '../sdk/apps.ts'
import { httpExecutor } from '../sdk/executor.ts'
import { createAppSyncAtStart } from '../sdk/sync-at-start.ts'

export interface FunctionPartsDeps {
  bus: Bus
  runStore: RunStore
  /** Read by a run's retry, which needs the triggering event. */
  events: EventStore
  runCodec: Codec<RunDoc>
  /** The router's input (`events`). */
  eventSource: Source<EventRecord>
  openRunnerState(scope: string, partition: number): Promise<RunnerState>
  openWaitStore(partition: number): Promise<WaitStore>
  control: ControlStore
  envs: Envs
  topics: TopicNames
  incoming: Output<EventRecord>
  checkSent: CheckSent
  log: Logger
}

export interface FunctionPartsConfig {
  partitions: number
  eventLimits: SendLimits
  functionsFile?: string
  watch: boolean
  /** Functions given in code (`startRunner`), served besides those of the file. */
  functions: SluiceFunction[]
  /** Which registered functions the served set replaces: all of them in embedded mode. */
  scope: SyncScope
  batchRecords: { runner: number; runSink: number; router: number }
  markRetentionMs: number
  waitsExpireIntervalMs: number
  /** Apps on the Inngest SDKs (sdk/): how they are synced and called. */
  apps: {
    devMode: boolean
    signingKey?: string
    urls: string[]
    allowedHosts: string[]
    connectTimeoutMs: number
    maxResponseBytes: number
  }
}

export function createFunctionParts(deps: FunctionPartsDeps, config: FunctionPartsConfig) {
  const { bus, log, runStore, runCodec } = deps
  const registry = createFunctionRegistry(deps.control, deps.envs)
  const runs = createOutput(bus, deps.topics.runs, runCodec, (r) => r.runId)
  const functionTopics = createFunctionTopics(bus, deps.topics, config.partitions)
  const waits = createWaitsTopic(bus, deps.topics)
  const apps = createApps(
    { control: deps.control, registry, envs: deps.envs, log: log.child({ stage: 'apps' }) },
    { ...config.apps, syncTimeoutMs: 30_000 },
  )
  /** A run met a function its app no longer has: the app is synced again, once at a time. */
  const resyncing = new Set<string>()
  const resync = (env: string, appId: string) => {
    const app = apps.get(`${env}/${appId}`)
    if (!app || resyncing.has(app.id)) return
    resyncing.add(app.id)
    apps
      .sync(app.url, env)
      .catch((err) => log.warn({ err, app: appId }, 'app not synced again'))
      .finally(() => resyncing.delete(app.id))
  }
  const routing = createRouting({
    functions: () => registry.list(),
    outputs: { runs, functionRuns: (fn) => functionTopics.output(fn) },
    waits,
  })
  return {
    /** What the router does to events, for the embedded one-pass path too (one-pass/index.ts). */
    routing,
    runSink: createRunSink(
      { source: createSource(bus, runCodec), store: runStore },
      { group: 'run-sink', inputTopic: deps.topics.runs, maxBatchRecords: config.batchRecords.runSink },
    ),
    /** Registers the served functions and runs them; starts before the router. */
    runners: createRunner(
      {
        bus,
        registry,
        topics: functionTopics,
        outputs: { runs, incoming: deps.incoming, waits: waits.output },
        openState: (fn, partition) => deps.openRunnerState(functionTopics.scopeOf(fn), partition),
        pauseOf: (env, key) => deps.control.get('pause', `${env}/${key}`),
        checkSent: deps.checkSent,
        httpExecutor: (doc) =>
          httpExecutor(doc, {
            signingKey: config.apps.signingKey,
            serverKind: config.apps.devMode ? 'dev' : 'cloud',
            connectTimeoutMs: config.apps.connectTimeoutMs,
            maxResponseBytes: config.apps.maxResponseBytes,
            onFunctionGone: (fn) => resync(fn.env, fn.appId),
          }),
        log: log.child({ stage: 'runner' }),
      },
      {
        scope: config.scope,
        eventLimits: config.eventLimits,
        maxBatchRecords: config.batchRecords.runner,
        markRetentionMs: config.markRetentionMs,
        functionsFile: config.functionsFile,
        watch: config.watch,
        functions: config.functions,
      },
    ),
    router: createRouter(
      {
        source: deps.eventSource,
        routing,
        log: log.child({ stage: 'router' }),
      },
      { inputTopic: deps.topics.events, group: 'router', maxBatchRecords: config.batchRecords.router },
    ),
    /** Resumes waits and cancels runs on matching events; runs with the router. */
    matcher: createMatcher(
      {
        bus,
        functionRuns: (fn) => functionTopics.output(fn),
        openStore: deps.openWaitStore,
        log: log.child({ stage: 'matcher' }),
      },
      {
        inputTopic: deps.topics.waits,
        group: 'wait-matcher',
        maxBatchRecords: config.batchRecords.router,
        expireIntervalMs: config.waitsExpireIntervalMs,
      },
    ),
    /** `sluice dev -u URL`: the apps synced at start, retried until they answer; with the api role. */
    appSync: createAppSyncAtStart({ apps, log: log.child({ stage: 'apps' }) }, { urls: config.apps.urls }),
    /** POST /fn/register, outside the REST API's guard (the SDKs prove the key themselves). */
    registerRoute: registerRoute({ apps }),
    /** Bulk cancels and replays, worked through by the api role. */
    bulk: createBulkWorker({
      control: deps.control,
      runs: runStore,
      events: deps.events,
      functionRuns: (fn) => functionTopics.output(fn),
      snapshots: runs,
      functionOf: (env, key) => registry.list(env).find((f) => f.key === key),
      routeKeyOf,
      log: log.child({ stage: 'bulk' }),
    }),
    routes: [
      runsRoutes({ runs: runStore }),
      runActionsRoutes({
        runs: runStore,
        events: deps.events,
        functionRuns: (fn) => functionTopics.output(fn),
        snapshots: runs,
        routeKeyOf: (run, event) => {
          const fn = registry.list(run.env).find((f) => f.key === run.functionId)
          return fn ? routeKeyOf(fn, event) : undefined
        },
      }),
      functionsRoutes({ list: (env) => registry.list(env), control: deps.control }),
      functionActionsRoutes({ control: deps.control, list: (env) => registry.list(env) }),
      bulkRoutes({ control: deps.control, runs: runStore }),
      appsRoutes({ apps }),
    ],
  }
}
