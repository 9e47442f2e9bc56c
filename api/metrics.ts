// Metrics of the HTTP roles (docs/operations.md, "Metrics"): one count and one duration per request,
// labelled by the route's template (`/v1/runs/:id`), never the URL a client sent.
import {
  LATENCY_BUCKETS,
  SeriesCounter,
  SeriesHistogram,
  type CounterSeries,
  type HistogramSeries,
} from '../core/metrics.ts'

const httpRequests = new SeriesCounter<'method' | 'route' | 'status'>({
  name: 'sluice_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code',
  labelNames: ['method', 'route', 'status'],
})

const httpDuration = new SeriesHistogram<'method' | 'route'>({
  name: 'sluice_http_request_duration_seconds',
  help: 'Time from receiving an HTTP request to sending its answer, by method and route template',
  labelNames: ['method', 'route'],
  buckets: LATENCY_BUCKETS,
})

/** The route label of a request that matched no route: a scanner's paths must not become series. */
export const UNMATCHED_ROUTE = 'unmatched'

const answered = new Map<string, { count: CounterSeries; duration: HistogramSeries }>()

/**
 * The series an answer counts on: kept per method, route template and status, which are bounded
 * (routes are templates, unknown paths one label).
 */
export function answerSeries(method: string, route: string, status: number) {
  const key = `${method} ${status} ${route}`
  let series = answered.get(key)
  if (!series) {
    series = {
      count: httpRequests.series({ method, route, status }),
      duration: httpDuration.series({ method, route }),
    }
    answered.set(key, series)
  }
  return series
}
