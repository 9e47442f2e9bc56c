// Metrics of the log (docs/operations.md, "Metrics"): publishes, measured once per batch that the
// adapter writes (not per record or caller), and consumer lag, read from the buses when scraped.
import { cappedLabel, gauge, LATENCY_BUCKETS, SeriesCounter, SeriesHistogram } from '../core/metrics.ts'
import type { Bus } from './types.ts'

export type BusKind = 'kafka' | 'local'

const publishDuration = new SeriesHistogram<'bus'>({
  name: 'sluice_log_publish_duration_seconds',
  help: 'Time from the first record of a publish batch to its acknowledgement (durable in the log)',
  labelNames: ['bus'],
  buckets: LATENCY_BUCKETS,
})

const publishedRecords = new SeriesCounter<'bus'>({
  name: 'sluice_log_published_records_total',
  help: 'Records acknowledged by the log',
  labelNames: ['bus'],
})

const publishFailures = new SeriesCounter<'bus'>({
  name: 'sluice_log_publish_failures_total',
  help: 'Publish batches the log did not take (their callers got LOG_UNAVAILABLE)',
  labelNames: ['bus'],
})

/** One bus's publish series: every adapter on the same log kind writes the same ones. */
export function publishMetrics(bus: BusKind) {
  return {
    duration: publishDuration.series({ bus }),
    records: publishedRecords.series({ bus }),
    failures: publishFailures.series({ bus }),
  }
}

/** A scrape does not wait longer than this for a broker's offsets: a frozen broker shows as missing lag. */
const LAG_TIMEOUT_MS = 2000
/** Runner groups and function topics are one per function: past these, `other`. */
const groupLabel = cappedLabel(100)
const topicLabel = cappedLabel(100)
const watched = new Set<Bus>()

gauge<'group' | 'topic' | 'partition'>({
  name: 'sluice_consumer_lag_records',
  help: 'Records a consumer group has yet to handle on a partition this process consumes (end offset - committed offset)',
  labelNames: ['group', 'topic', 'partition'],
  async collect() {
    this.reset()
    const lags = await Promise.all([...watched].map((bus) => withTimeout(bus.consumerLag(), LAG_TIMEOUT_MS)))
    for (const lag of lags.flat()) {
      const labels = { group: groupLabel(lag.group), topic: topicLabel(lag.topic), partition: String(lag.partition) }
      this.inc(labels, lag.records) // inc: groups capped into `other` add up
    }
  },
})

/** Reports `bus`'s consumer lag at each scrape until the returned function is called. */
export function watchConsumerLag(bus: Bus): () => void {
  watched.add(bus)
  return () => void watched.delete(bus)
}

function withTimeout<T>(work: Promise<T[]>, ms: number): Promise<T[]> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<T[]>((resolve) => {
    timer = setTimeout(() => resolve([]), ms)
  })
  return Promise.race([work.catch(() => []), late]).finally(() => clearTimeout(timer))
}
