// The runner stage: serves a set of functions. It loads them (given in code, and from the user's
// functions file, reloaded on change with --watch), registers them in the function registry, and
// runs one function runner (runner/function-runner.ts) per function, each in a consumer group of its
// own, or one shared by the functions of an env-scoped concurrency key (consumer-groups.ts); a reload
// swaps the whole set, one reload at a time.
import type { Logger } from 'pino'
import type { Bus, Subscription } from '../bus/types.ts'
import type { Output } from '../bus/output.ts'
import type { FunctionRef, FunctionTopics } from '../bus/function-topics.ts'
import type { EventRecord } from '../core/event.ts'
import type { RunDoc } from '../core/run-doc.ts'
import { SluiceError } from '../core/errors.ts'
import type { SluiceFunction } from '../client/function.ts'
import { DEFAULT_FUNCTION_TIMEOUT_MS, type FunctionSpec } from '../core/function.ts'
import type { FunctionRegistry, SyncScope } from '../control/functions.ts'
import type { FunctionDoc, PauseDoc } from '../control/types.ts'
import type { WaitsOutput } from '../router/waits-types.ts'
import { createFunctionRunner } from './function-runner.ts'
import { inProcessExecutor, type Executor } from './executor.ts'
import { planGroups, subscribeConsumers } from './consumer-groups.ts'
import type { RunnerState } from './state.ts'
import { FUNCTION_FINISHED, type CheckSent, type SendLimits } from './events.ts'
import { FUNCTION_BACKOFF } from './outcome.ts'
import { loadFunctionsFile, watchFunctionsFile } from './functions-file.ts'

export interface RunnerDeps {
  bus: Bus
  registry: FunctionRegistry
  topics: FunctionTopics
  outputs: { runs: Output<RunDoc>; incoming: Output<EventRecord>; waits: WaitsOutput }
  openState(fn: FunctionRef, partition: number): Promise<RunnerState>
  /** A function's pause (control plane), if it was ever paused. */
  pauseOf(env: string, key: string): PauseDoc | undefined
  /** The environment's schema modes for step.sendEvent. */
  checkSent?: CheckSent
  /** How a function of an app served over HTTP (runtime http, registered by its sync) is executed. */
  httpExecutor?(doc: FunctionDoc): Executor
  log: Logger
}

/** How often the registry is looked at for apps' functions synced, changed or removed. */
const APPS_WATCH_MS = 1000

export interface RunnerConfig {
  /** Which registered functions the served set replaces: all of them in embedded mode. */
  scope: SyncScope
  eventLimits: SendLimits
  maxBatchRecords: number
  markRetentionMs: number
  functionsFile?: string
  watch: boolean
  /** Functions given in code (`startRunner`), served besides those of the file. */
  functions: SluiceFunction[]
}

export function createRunner(deps: RunnerDeps, config: RunnerConfig) {
  const { log } = deps
  let running: Array<ReturnType<typeof createFunctionRunner>> = []
  /** The groups shared by functions with an env-scoped key (consumer-groups.ts); stopped before the runners. */
  let shared: Subscription[] = []
  let watcher: { close(): void } | undefined
  let appsWatch: NodeJS.Timeout | undefined
  /** The apps' functions served now, as registered (docs are replaced on change, never edited). */
  let servedHttp: FunctionDoc[] = []
  const httpDocs = () => (deps.httpExecutor ? deps.registry.list().filter((f) => f.runtime?.kind === 'http') : [])
  // Reloads queue behind each other, so two never interleave their stop and start.
  let queue: Promise<unknown> = Promise.resolve()
  const enqueue = (work: () => Promise<void>): Promise<void> => {
    const next = queue.then(work)
    queue = next.catch(() => {})
    return next
  }

  async function load(): Promise<SluiceFunction[]> {
    const fromFile = config.functionsFile ? await loadFunctionsFile(config.functionsFile) : []
    return [...config.functions, ...fromFile]
  }

  async function replace(own: SluiceFunction[]): Promise<void> {
    const http = httpDocs()
    const functions: FunctionSpec[] = [...own, ...http.map(asServed)]
    const seen = new Set<string>()
    for (const fn of functions) {
      const id = `${fn.env}/${fn.key}`
      if (seen.has(id))
        throw new SluiceError('CONFIG_INVALID', `function "${fn.key}" is defined twice in environment "${fn.env}"`)
      seen.add(id)
    }
    await deps.registry.sync(
      own.map((f) => ({
        env: f.env,
        key: f.key,
        appId: f.appId,
        functionId: f.id,
        name: f.name,
        triggers: f.triggers,
        ...(f.cancelOn.length > 0 && { cancelOn: f.cancelOn }),
        ...(f.flow && { flow: f.flow }),
        retries: f.retries,
        timeoutMs: f.timeoutMs,
      })),
      config.scope,
    )
    // In parallel, as the groups start below: a restart's time must not grow with the functions served.
    await Promise.all(functions.map((fn) => deps.topics.ensure(fn)))
    // Where each function's code runs: a handler given to this process, or the app that synced it.
    const executors = new Map<FunctionSpec, Executor>([
      ...own.map((fn): [FunctionSpec, Executor] => [fn, inProcessExecutor(fn)]),
      ...http.map((doc, i): [FunctionSpec, Executor] => [functions[own.length + i], deps.httpExecutor!(doc)]),
    ])
    servedHttp = http
    await stopAll()
    running = functions.map((fn) =>
      createFunctionRunner(
        {
          bus: deps.bus,
          fn,
          execute: executors.get(fn)!,
          codec: deps.topics.codec,
          outputs: {
            self: deps.topics.output(fn),
            runs: deps.outputs.runs,
            incoming: deps.outputs.incoming,
            waits: deps.outputs.waits,
            functionRuns: (ref) => deps.topics.output(ref),
            finishedHeard: (env) =>
              deps.registry
                .list(env)
                .some((f) => f.triggers.some((t) => 'event' in t && t.event === FUNCTION_FINISHED)),
          },
          isServed: (env, key) => deps.registry.list(env).some((f) => f.key === key),
          pauseOf: () => deps.pauseOf(fn.env, fn.key),
          openState: (partition) => deps.openState(fn, partition),
          checkSent: deps.checkSent,
          log: log.child({ fn: fn.key, env: fn.env }),
        },
        {
          inputTopic: deps.topics.topicOf(fn),
          group: `runner.${deps.topics.scopeOf(fn)}`,
          backoff: FUNCTION_BACKOFF,
          eventLimits: config.eventLimits,
          markRetentionMs: config.markRetentionMs,
          maxBatchRecords: config.maxBatchRecords,
        },
      ),
    )
    const runnerOf = new Map(functions.map((fn, i) => [fn, running[i]]))
    // Functions sharing an env-scoped key: one group over their topics, partition i of each to one runner.
    // Every group joins (and restores its partitions) at once: one after another, a restart took the
    // sum of their joins (bench/recovery).
    const joined = await Promise.allSettled(
      planGroups(functions, deps.topics.scopeOf).map(async (plan) => {
        const members = plan.functions.map((fn) => runnerOf.get(fn)!)
        if (!plan.coPartitioned) return members[0].start()
        const group = { group: `runner.${plan.name}`, maxBatchRecords: config.maxBatchRecords, coPartitioned: true }
        shared.push(
          await subscribeConsumers(
            deps.bus,
            members.map((r) => r.consumer),
            group,
          ),
        )
        for (const r of members) r.serve()
      }),
    )
    const failed = joined.find((r) => r.status === 'rejected')
    if (failed) {
      await stopAll()
      throw failed.reason
    }
    const triggers = (f: FunctionSpec) => f.triggers.map((t) => ('cron' in t ? `cron ${t.cron}` : t.event)).join(', ')
    log.info({ functions: functions.map((f) => `${f.env}/${f.key} ← ${triggers(f)}`) }, 'serving functions')
  }

  async function stopAll(): Promise<void> {
    const stopping = running
    const groups = shared
    running = []
    shared = []
    await Promise.all(groups.map((s) => s.stop()))
    await Promise.all(stopping.map((r) => r.stop()))
  }

  function watchApps(): void {
    const now = httpDocs()
    if (now.length === servedHttp.length && now.every((doc, i) => doc === servedHttp[i])) return
    servedHttp = now
    enqueue(async () => replace(await load()))
      .then(() => log.info({ functions: now.map((f) => f.key) }, "apps' functions served"))
      .catch((err) => log.error({ err }, "apps' functions not served"))
  }

  function reload(): void {
    enqueue(async () => replace(await load()))
      .then(() => log.info({ file: config.functionsFile }, 'functions reloaded'))
      // A broken edit keeps the functions served before it.
      .catch((err) => log.error({ err, file: config.functionsFile }, 'functions not reloaded'))
  }

  return {
    /** Registers the served functions and runs them; starts before the router. */
    async start() {
      const functions = await load()
      await enqueue(() => replace(functions))
      if (config.functionsFile && config.watch) watcher = watchFunctionsFile(config.functionsFile, reload)
      // An app's sync (any api process) changes the registry: its functions are served from then on.
      if (deps.httpExecutor) appsWatch = setInterval(watchApps, APPS_WATCH_MS)
    },
    async stop() {
      clearInterval(appsWatch)
      watcher?.close()
      await enqueue(stopAll)
    },
  }
}

/** An app's function as the function runner takes it: its registration (its executor calls the app). */
function asServed(doc: FunctionDoc): FunctionSpec {
  return {
    appId: doc.appId,
    id: doc.functionId,
    key: doc.key,
    name: doc.name,
    retries: doc.retries,
    timeoutMs: doc.timeoutMs ?? DEFAULT_FUNCTION_TIMEOUT_MS,
    triggers: doc.triggers,
    cancelOn: doc.cancelOn ?? [],
    ...(doc.flow && { flow: doc.flow }),
    env: doc.env,
  }
}
