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
  const outputs = new Map<string, Output<FunctionRecord>>()
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
    output(fn: FunctionRef): Output<FunctionRecord> {
      const topic = topicOf(fn)
      let output = outputs.get(topic)
      if (!output) {
        // A run's records and signals share its key: its flow-control key (one owner applies the limits), else its ID.
        const inner = createOutput(bus, topic, codec, (r) => r.routeKey ?? r.runId)
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
