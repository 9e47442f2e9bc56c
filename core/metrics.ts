// The process's one metrics registry, served as GET /metrics in Prometheus' text format
// (docs/operations.md, "Metrics"). Each stage declares its metrics in its folder's metrics.ts
// with these helpers, so every name is a constant in one place per stage and all land here.
// Importing creates metric objects and starts nothing: the default process metrics (their
// event-loop monitor and GC observer) start with startProcessMetrics(), from cli/.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export const registry = new Registry()

/** The value a capped label gives every value past its cap. */
export const OTHER_LABEL = 'other'

interface MetricConfig<L extends string> {
  name: string
  help: string
  labelNames?: readonly L[]
}

export function counter<L extends string = never>(config: MetricConfig<L>): Counter<L> {
  return new Counter({ ...config, registers: [registry] })
}

export function histogram<L extends string = never>(config: MetricConfig<L> & { buckets: number[] }): Histogram<L> {
  return new Histogram({ ...config, registers: [registry] })
}

/** `collect` runs at each scrape (values computed then, such as consumer lag); it may be async. */
export function gauge<L extends string = never>(
  config: MetricConfig<L> & { collect?: (this: Gauge<L>) => void | Promise<void> },
): Gauge<L> {
  return new Gauge({ ...config, registers: [registry] })
}

/** Latencies from a millisecond to ten seconds: publishes, inserts, requests, transforms, steps. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * A label whose values come from users (environments, functions, consumer groups): the first
 * `limit` values seen keep their name, any later one is `other`, so the label's series stay bounded.
 */
export function cappedLabel(limit: number): (value: string) => string {
  const kept = new Set<string>()
  return (value) => {
    if (kept.has(value)) return value
    if (kept.size >= limit) return OTHER_LABEL
    kept.add(value)
    return value
  }
}

/** Seconds since `startNs` (a `process.hrtime.bigint()`), for a histogram. */
export function secondsSince(startNs: bigint): number {
  return Number(process.hrtime.bigint() - startNs) / 1e9
}

let processMetricsStarted = false

/** prom-client's default metrics (CPU, RSS, heap, GC, event-loop lag, handles); once per process. */
export function startProcessMetrics(): void {
  if (processMetricsStarted) return
  processMetricsStarted = true
  collectDefaultMetrics({ register: registry })
}

/** The registry in Prometheus' text format. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() }
}
