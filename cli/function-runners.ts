// Wiring for serving functions, shared by every process that runs them: it registers the
// served functions, gives each its own topic and runner stage (one consumer group per
// function), and swaps them on reload. Topic names are resolved here, never in the stages.
import type { Logger } from 'pino'
import type { Bus } from '../bus/types.ts'
import { createOutput, type Output } from '../bus/output.ts'
import { jsonCodec } from '../bus/codec.ts'
import { functionTopic, type TopicNames } from '../bus/topics.ts'
import type { EventRecord } from '../core/event.ts'
import { SluiceError } from '../core/errors.ts'
import type { SluiceFunction } from '../client/function.ts'
import type { FunctionRegistry, SyncScope } from '../control/functions.ts'
import type { RunDoc } from '../store/runs-types.ts'
import { createRunner } from '../runner/index.ts'
import type { RunRecord } from '../core/run-record.ts'
import type { RunnerState } from '../runner/state.ts'
import type { SendLimits } from '../runner/events.ts'
import { FUNCTION_BACKOFF } from '../runner/outcome.ts'

export interface FunctionRef {
  env: string
  key: string
}

/** Per-function topics: created on first use, shared by the router and the runners. */
export function createFunctionTopics(bus: Bus, names: TopicNames, partitions: number) {
  const codec = jsonCodec<RunRecord>()
  const ensured = new Map<string, Promise<void>>()
  const outputs = new Map<string, Output<RunRecord>>()
  const scopeOf = (fn: FunctionRef) => `${fn.env}~${fn.key}`
  const topicOf = (fn: FunctionRef) => functionTopic(names, scopeOf(fn))

  function ensure(fn: FunctionRef): Promise<void> {
    const topic = topicOf(fn)
    let done = ensured.get(topic)
    if (!done) {
      done = bus.ensureTopics({ [topic]: { partitions } })
      ensured.set(topic, done)
      done.catch(() => ensured.delete(topic))
    }
    return done
  }

  return {
    codec,
    topicOf,
    /** Names a function's runner group and its state key space. */
    scopeOf,
    ensure,
    output(fn: FunctionRef): Output<RunRecord> {
      const topic = topicOf(fn)
      let output = outputs.get(topic)
      if (!output) {
        const inner = createOutput(bus, topic, codec, (r) => r.runId)
        output = {
          publish: async (values) => {
            await ensure(fn)
            await inner.publish(values)
          },
        }
        outputs.set(topic, output)
      }
      return output
    },
  }
}

export type FunctionTopics = ReturnType<typeof createFunctionTopics>

export interface FunctionRunnersDeps {
  bus: Bus
  registry: FunctionRegistry
  topics: FunctionTopics
  outputs: { runs: Output<RunDoc>; incoming: Output<EventRecord> }
  openState(fn: FunctionRef, partition: number): Promise<RunnerState>
  log: Logger
}

export interface FunctionRunnersConfig {
  scope: SyncScope
  eventLimits: SendLimits
  maxBatchRecords: number
  markRetentionMs: number
}

export function createFunctionRunners(deps: FunctionRunnersDeps, config: FunctionRunnersConfig) {
  let running: Array<ReturnType<typeof createRunner>> = []
  // Reloads queue behind each other, so two never interleave their stop and start.
  let queue: Promise<unknown> = Promise.resolve()

  async function replace(functions: SluiceFunction[]): Promise<void> {
    const seen = new Set<string>()
    for (const fn of functions) {
      const id = `${fn.env}/${fn.key}`
      if (seen.has(id))
        throw new SluiceError('CONFIG_INVALID', `function "${fn.key}" is defined twice in environment "${fn.env}"`)
      seen.add(id)
    }
    await deps.registry.sync(
      functions.map((f) => ({
        env: f.env,
        key: f.key,
        appId: f.appId,
        functionId: f.id,
        name: f.name,
        trigger: f.trigger,
        retries: f.retries,
        timeoutMs: f.timeoutMs,
      })),
      config.scope,
    )
    for (const fn of functions) await deps.topics.ensure(fn)
    await stopAll()
    running = functions.map((fn) =>
      createRunner(
        {
          bus: deps.bus,
          fn,
          codec: deps.topics.codec,
          outputs: { self: deps.topics.output(fn), runs: deps.outputs.runs, incoming: deps.outputs.incoming },
          openState: (partition) => deps.openState(fn, partition),
          log: deps.log.child({ fn: fn.key, env: fn.env }),
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
    for (const runner of running) await runner.start()
    deps.log.info({ functions: functions.map((f) => `${f.env}/${f.key} ← ${f.trigger.event}`) }, 'serving functions')
  }

  async function stopAll(): Promise<void> {
    const stopping = running
    running = []
    await Promise.all(stopping.map((r) => r.stop()))
  }

  return {
    /** Serves exactly `functions` (registering them and dropping those no longer served). */
    serve(functions: SluiceFunction[]): Promise<void> {
      const next = queue.then(() => replace(functions))
      queue = next.catch(() => {})
      return next
    },
    stop(): Promise<void> {
      const next = queue.then(stopAll)
      queue = next.catch(() => {})
      return next
    },
  }
}
