// Which consumer group reads each function's topic. A function has a group of its own, except the
// functions of an environment that share an `env`-scoped concurrency key: one group reads all their
// topics with range assignment (bus/types.ts `coPartitioned`), so partition i of each of them is
// owned by one runner. The router keys their runs by that key's value (core/flow.ts `routingKey`),
// which puts a value on the same partition number of every function topic (same partition count,
// same murmur2), so one process counts every run of the value, in its process-wide slots. A function
// whose runs could not be routed by its env-scoped key is refused when registered (control/flow-routing.ts).
import { createHash } from 'node:crypto'
import type { Batch, Bus, Subscription } from '../bus/types.ts'
import type { FunctionSpec } from '../core/function.ts'

/** The side of a function runner that a consumer group drives: its topic's batches and partitions. */
export interface TopicConsumer {
  topic: string
  handle(batch: Batch): Promise<void>
  assign(partitions: number[]): Promise<void>
  revoke(partitions: number[]): Promise<void>
}

export interface GroupPlan {
  /** The group's name without the runner prefix: the function's scope, or the shared keys' digest. */
  name: string
  functions: FunctionSpec[]
  coPartitioned: boolean
}

const envKeys = (fn: FunctionSpec) =>
  (fn.flow?.concurrency ?? []).filter((c) => c.scope === 'env').map((c) => `${fn.env}\0${c.key}`)

/**
 * One plan per function, or per set of functions linked by `env`-scoped keys (transitively). A set's
 * name derives from its keys, not its functions, so serving one more function with the key adds a
 * topic to the group instead of renaming it (whose new offsets would start from the beginning).
 */
export function planGroups(functions: FunctionSpec[], scopeOf: (fn: FunctionSpec) => string): GroupPlan[] {
  const setOf = new Map<string, Set<string>>() // env key → the keys linked with it (one shared object)
  for (const fn of functions) {
    const keys = envKeys(fn)
    const merged = new Set(keys.flatMap((k) => [...(setOf.get(k) ?? [k])]))
    for (const k of merged) setOf.set(k, merged)
  }
  const plans = new Map<Set<string>, GroupPlan>()
  const own: GroupPlan[] = []
  for (const fn of functions) {
    const [key] = envKeys(fn)
    if (key === undefined) {
      own.push({ name: scopeOf(fn), functions: [fn], coPartitioned: false })
      continue
    }
    const set = setOf.get(key)!
    const digest = createHash('sha256')
      .update([...set].sort().join('\n'))
      .digest('hex')
      .slice(0, 16)
    const plan = plans.get(set) ?? { name: `${fn.env}~env-concurrency.${digest}`, functions: [], coPartitioned: true }
    plan.functions.push(fn)
    plans.set(set, plan)
  }
  return [...own, ...plans.values()]
}

/** One subscription of `group` over the consumers' topics, each batch and partition handed to its topic's consumer. */
export function subscribeConsumers(
  bus: Bus,
  consumers: TopicConsumer[],
  config: { group: string; maxBatchRecords: number; coPartitioned: boolean },
): Promise<Subscription> {
  const byTopic = new Map(consumers.map((c) => [c.topic, c]))
  const consumerOf = (topic: string) => {
    const consumer = byTopic.get(topic)
    if (!consumer) throw new Error(`consumer group ${config.group}: no function reads topic ${topic}`)
    return consumer
  }
  return bus.subscribe({
    group: config.group,
    topics: [...byTopic.keys()],
    maxBatchRecords: config.maxBatchRecords,
    coPartitioned: config.coPartitioned,
    handler: (batch) => consumerOf(batch.topic).handle(batch),
    // Topics restore in parallel (each partition's changelog read costs a few seconds).
    onAssign: async (assigned) => {
      await Promise.all(assigned.map(({ topic, partitions }) => consumerOf(topic).assign(partitions)))
    },
    onRevoke: async (revoked) => {
      await Promise.all(revoked.map(({ topic, partitions }) => consumerOf(topic).revoke(partitions)))
    },
  })
}
