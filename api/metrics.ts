// Metrics of the HTTP roles (docs/operations.md, "Metrics"): one count and one duration per request,
// labelled by the route's template (`/v1/runs/:id`), never the URL a client sent.
import { counter, histogram, LATENCY_BUCKETS } from '../core/metrics.ts'

export const httpRequests = counter<'method' | 'route' | 'status'>({
  name: 'sluice_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code',
  labelNames: ['method', 'route', 'status'],
})

export const httpDuration = histogram<'method' | 'route'>({
  name: 'sluice_http_request_duration_seconds',
  help: 'Time from receiving an HTTP request to sending its answer, by method and route template',
  labelNames: ['method', 'route'],
  buckets: LATENCY_BUCKETS,
})

/** The route label of a request that matched no route: a scanner's paths must not become series. */
export const UNMATCHED_ROUTE = 'unmatched'
