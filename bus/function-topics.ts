// Per-function topics: one per served function and environment, created on first use and shared by
// the router (which writes a run's first record) and the runner (which continues it). Their names are
// resolved here, beside bus/topics.ts, so neither stage knows a topic name.
import type { Bus } from './types.ts'
import { createOutput, type Output } from './output.ts'
import { jsonCodec } from './codec.ts'
import { functionTopic, type TopicNames } from './topics.ts'
import type { FunctionRecord } from '../core/run-record.ts'

export interface FunctionRef {
  env: string
  key: string
}

export function createFunctionTopics(bus: Bus, names: TopicNames, partitions: number) {
  const codec = jsonCodec<FunctionRecord>()
  const ensured = new Map<string, Promise<void>>()
  /** Topics whose ensure has resolved: a publish to one is made at once, not a turn of the microtask queue later. */
  const ready = new Set<string>()
  const outputs = new Map<string, Output<FunctionRecord>>()
  const scopeOf = (fn: FunctionRef) => `${fn.env}~${fn.key}`
  const topicOf = (fn: FunctionRef) => functionTopic(names, scopeOf(fn))

  function ensure(fn: FunctionRef): Promise<void> {
    const topic = topicOf(fn)
    let done = ensured.get(topic)
    if (!done) {
      done = bus.ensureTopics({ [topic]: { partitions } })
      ensured.set(topic, done)
      done.then(
        () => ready.add(topic),
        () => ensured.delete(topic),
      )
    }
    return done
  }

  return {
    codec,
    topicOf,
    /** Names a function's runner group and its state key space. */
    scopeOf,
    ensure,
    output(fn: FunctionRef): Output<FunctionRecord> {
      const topic = topicOf(fn)
      let output = outputs.get(topic)
      if (!output) {
        // A run's records and signals share its key: its flow-control key (one owner applies the limits), else its ID.
        const inner = createOutput(bus, topic, codec, (r) => r.routeKey ?? r.runId)
        // Made in the caller's tick once the topic exists: the one pass (one-pass/index.ts) starts its
        // write as soon as it has published, and a run must be in the write of the event that made it.
        output = {
          publish: (values) =>
            ready.has(topic) ? inner.publish(values) : ensure(fn).then(() => inner.publish(values)),
        }
        outputs.set(topic, output)
      }
      return output
    },
  }
}

export type FunctionTopics = ReturnType<typeof createFunctionTopics>
