// The functions half of the embedded composition root: run store and sink, router, and the
// runners of the functions this process serves (from `--functions FILE` or given in code).
import type { Logger } from 'pino'
import type { Bus } from '../bus/types.ts'
import type { Output } from '../bus/output.ts'
import { createOutput } from '../bus/output.ts'
import { jsonCodec } from '../bus/codec.ts'
import type { TopicNames } from '../bus/topics.ts'
import type { Rocks } from '../core/rocks.ts'
import type { EventRecord } from '../core/event.ts'
import type { ControlStore } from '../control/types.ts'
import type { Envs } from '../control/envs.ts'
import { createFunctionRegistry } from '../control/functions.ts'
import type { SluiceFunction } from '../client/function.ts'
import { createRocksRunStore } from '../store/runs-rocksdb.ts'
import { createRunSink } from '../store/runs-sink.ts'
import type { RunDoc } from '../store/runs-types.ts'
import { createRouter } from '../router/index.ts'
import { createRocksRunnerState } from '../runner/rocksdb.ts'
import type { SendLimits } from '../runner/events.ts'
import { runsRoutes } from '../api/runs.ts'
import { functionsRoutes } from '../api/functions.ts'
import { createFunctionRunners, createFunctionTopics } from './function-runners.ts'
import { loadFunctionsFile, watchFunctionsFile } from './functions-file.ts'

export interface EmbeddedFunctionsDeps {
  rocks: Rocks
  bus: Bus
  control: ControlStore
  envs: Envs
  topics: TopicNames
  incoming: Output<EventRecord>
  log: Logger
}

export interface EmbeddedFunctionsConfig {
  partitions: number
  eventLimits: SendLimits
  functionsFile?: string
  watch: boolean
  /** Functions given in code (`startRunner`), served besides those of the file. */
  functions?: SluiceFunction[]
}

const MARK_RETENTION_MS = 7 * 24 * 60 * 60_000

export function createEmbeddedFunctions(deps: EmbeddedFunctionsDeps, config: EmbeddedFunctionsConfig) {
  const { bus, log } = deps
  const registry = createFunctionRegistry(deps.control, deps.envs)
  const runStore = createRocksRunStore(deps.rocks)
  const runCodec = jsonCodec<RunDoc>()
  const runs = createOutput(bus, deps.topics.runs, runCodec, (r) => r.runId)
  const functionTopics = createFunctionTopics(bus, deps.topics, config.partitions)
  const runners = createFunctionRunners(
    {
      bus,
      registry,
      topics: functionTopics,
      outputs: { runs, incoming: deps.incoming },
      // One RocksDB holds every partition's state, so one state per function serves them all.
      openState: async (fn) => createRocksRunnerState(deps.rocks, functionTopics.scopeOf(fn)),
      log: log.child({ stage: 'runner' }),
    },
    // This process is the only one serving functions: the registry is exactly what it serves.
    { scope: { kind: 'all' }, eventLimits: config.eventLimits, maxBatchRecords: 200, markRetentionMs: MARK_RETENTION_MS },
  )
  let watcher: { close(): void } | undefined

  async function load(): Promise<SluiceFunction[]> {
    const fromFile = config.functionsFile ? await loadFunctionsFile(config.functionsFile) : []
    return [...(config.functions ?? []), ...fromFile]
  }

  const serving = {
    async start() {
      await runners.serve(await load())
      if (config.functionsFile && config.watch) {
        watcher = watchFunctionsFile(config.functionsFile, () => {
          load()
            .then((functions) => runners.serve(functions))
            .then(() => log.info({ file: config.functionsFile }, 'functions reloaded'))
            // A broken edit keeps the functions served before it.
            .catch((err) => log.error({ err, file: config.functionsFile }, 'functions not reloaded'))
        })
      }
    },
    async stop() {
      watcher?.close()
      await runners.stop()
    },
  }

  return {
    /** In start order: the sink, then the runners (registering functions), then the router. */
    stages: [
      createRunSink({ bus, codec: runCodec, store: runStore }, { group: 'run-sink', inputTopic: deps.topics.runs, maxBatchRecords: 2000 }),
      serving,
      createRouter(
        {
          bus,
          codec: jsonCodec<EventRecord>(),
          triggerIndex: () => registry.triggerIndex(),
          outputs: { runs, functionRuns: (fn) => functionTopics.output(fn) },
          log: log.child({ stage: 'router' }),
        },
        { inputTopic: deps.topics.events, group: 'router', maxBatchRecords: 1000 },
      ),
    ],
    routes: [runsRoutes({ runs: runStore }), functionsRoutes(registry)],
    runStore,
  }
}
