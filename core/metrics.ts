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

/**
 * Counters and histograms of the request path, whose callers keep a series per label set and count
 * on it with plain arithmetic. prom-client's `inc` and `observe` turn a labels object into a key and
 * look it up on every call, and a histogram finds its bucket by the bound turned into a string: ~0.6
 * µs a call under load, four per Event API request (docs/operations.md, "The Event API's HTTP
 * layer"). Registered in the same registry, and exported in prom-client's format.
 */
abstract class SeriesMetric<L extends string, S> {
  readonly aggregator = 'sum'
  readonly name: string
  readonly help: string
  readonly labelNames: readonly L[]
  abstract readonly type: 'counter' | 'histogram'
  #series = new Map<string, { labels: Labels<L>; series: S }>()
  constructor(config: MetricConfig<L>) {
    this.name = config.name
    this.help = config.help
    this.labelNames = config.labelNames ?? []
    registry.registerMetric(this as never)
  }
  protected abstract create(): S
  protected abstract values(labels: Labels<L>, series: S): MetricValue[]
  protected abstract clear(series: S): void
  /** The series of `labels`: look it up once per label set and keep it (each call builds a key). */
  series(labels: Labels<L>): S {
    const key = this.labelNames.map((name) => labels[name]).join('\0')
    const entry = this.#series.get(key)
    if (entry) return entry.series
    const series = this.create()
    this.#series.set(key, { labels: { ...labels }, series })
    return series
  }
  async get() {
    const values = [...this.#series.values()].flatMap(({ labels, series }) => this.values(labels, series))
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }
  reset(): void {
    for (const { series } of this.#series.values()) this.clear(series)
  }
}

type Labels<L extends string> = Record<L, string | number>
interface MetricValue {
  labels: Record<string, string | number>
  value: number
  metricName?: string
}

export class CounterSeries {
  value = 0
  inc(by = 1): void {
    this.value += by
  }
}

export class SeriesCounter<L extends string = never> extends SeriesMetric<L, CounterSeries> {
  readonly type = 'counter'
  protected create() {
    return new CounterSeries()
  }
  protected values(labels: Labels<L>, series: CounterSeries) {
    return [{ labels, value: series.value }]
  }
  protected clear(series: CounterSeries) {
    series.value = 0
  }
}

export class HistogramSeries {
  /** Per bucket, the observations at most its bound and over the one before; the last is +Inf's. */
  readonly counts: Float64Array
  sum = 0
  count = 0
  readonly #bounds: readonly number[]
  constructor(bounds: readonly number[]) {
    this.#bounds = bounds
    this.counts = new Float64Array(bounds.length + 1)
  }
  observe(value: number): void {
    const bounds = this.#bounds
    let i = 0
    while (i < bounds.length && value > bounds[i]) i++
    this.counts[i]++
    this.sum += value
    this.count++
  }
}

export class SeriesHistogram<L extends string = never> extends SeriesMetric<L, HistogramSeries> {
  readonly type = 'histogram'
  readonly #bounds: readonly number[]
  constructor(config: MetricConfig<L> & { buckets: number[] }) {
    super(config)
    this.#bounds = Object.freeze([...config.buckets].sort((a, b) => a - b))
  }
  protected create() {
    return new HistogramSeries(this.#bounds)
  }
  protected values(labels: Labels<L>, series: HistogramSeries) {
    let cumulative = 0
    const values: MetricValue[] = []
    for (let i = 0; i <= this.#bounds.length; i++) {
      cumulative += series.counts[i]
      const le = i < this.#bounds.length ? this.#bounds[i] : '+Inf'
      values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` })
    }
    values.push({ labels, value: series.sum, metricName: `${this.name}_sum` })
    values.push({ labels, value: series.count, metricName: `${this.name}_count` })
    return values
  }
  protected clear(series: HistogramSeries) {
    series.counts.fill(0)
    series.sum = 0
    series.count = 0
  }
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
