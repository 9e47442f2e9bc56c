// The shape most stages share: one consumer group over some topics, each batch decoded and
// handed to the stage; resolving commits, throwing redelivers (bus semantics).
import type { ConsumedRecord, Subscription } from './types.ts'
import type { Source } from './source.ts'

export interface ConsumerStageConfig {
  group: string
  topics: string[]
  maxBatchRecords: number
  /** While true the stage has nothing to do: batches are committed without being decoded. */
  idle?: () => boolean
}

/** `handle` gets the decoded values and, index for index, the records they came from. */
export function createConsumerStage<T>(
  source: Source<T>,
  config: ConsumerStageConfig,
  handle: (values: T[], records: ConsumedRecord[]) => Promise<void>,
) {
  let subscription: Subscription | undefined
  return {
    async start() {
      subscription = await source.subscribe({
        group: config.group,
        topics: config.topics,
        maxBatchRecords: config.maxBatchRecords,
        handler: async (batch) => {
          if (!config.idle?.())
            await handle(
              batch.records.map((r) => source.decode(r)),
              batch.records,
            )
        },
      })
    },
    async stop() {
      await subscription?.stop()
    },
  }
}
