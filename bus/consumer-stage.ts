// The shape most stages share: one consumer group over some topics, each batch decoded and
// handed to the stage; resolving commits, throwing redelivers (bus semantics).
import type { Bus, Subscription } from './types.ts'
import type { Codec } from './codec.ts'

export interface ConsumerStageConfig { group: string; topics: string[]; maxBatchRecords?: number }

export function createConsumerStage<T>(bus: Bus, codec: Codec<T>, config: ConsumerStageConfig, handle: (values: T[]) => Promise<void>) {
  let subscription: Subscription | undefined
  return {
    async start() {
      subscription = await bus.subscribe({
        group: config.group,
        topics: config.topics,
        maxBatchRecords: config.maxBatchRecords,
        handler: (batch) => handle(batch.records.map((r) => codec.decode(r.value))),
      })
    },
    async stop() {
      await subscription?.stop()
    },
  }
}
