// Metrics of the ingest stage (docs/operations.md, "Metrics"): counted once per request, never per
// event, and labelled by environment (capped) and error code, never by key, webhook or event name.
import { cappedLabel, counter, SeriesCounter, SeriesHistogram, type CounterSeries } from '../core/metrics.ts'

const eventsAccepted = new SeriesCounter<'env'>({
  name: 'sluice_ingest_events_accepted_total',
  help: 'Events the Event API made durable in the log and answered 200 for, by environment',
  labelNames: ['env'],
})

export const webhookRequestsAccepted = counter({
  name: 'sluice_ingest_webhook_requests_accepted_total',
  help: 'Webhook requests captured onto the log and answered 200',
})

export const requestsRejected = counter<'api' | 'env' | 'code'>({
  name: 'sluice_ingest_requests_rejected_total',
  help: 'Event API and webhook requests refused, by API (event, webhook), environment and error code',
  labelNames: ['api', 'env', 'code'],
})

const requestBytes = new SeriesHistogram<'api'>({
  name: 'sluice_ingest_request_bytes',
  help: 'Body size of the Event API and webhook requests read',
  labelNames: ['api'],
  buckets: [256, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304],
})

/** Branch environments come and go: the first 100 seen keep their name. */
export const envLabel = cappedLabel(100)

/** Body sizes, by API: the series of each, kept. */
export const bodyBytes = {
  event: requestBytes.series({ api: 'event' }),
  webhook: requestBytes.series({ api: 'webhook' }),
}

const acceptedByEnv = new Map<string, CounterSeries>()

/** The series counting an environment's accepted events: one per label, so at most 101. */
export function acceptedIn(env: string): CounterSeries {
  const label = envLabel(env)
  let series = acceptedByEnv.get(label)
  if (!series) {
    series = eventsAccepted.series({ env: label })
    acceptedByEnv.set(label, series)
  }
  return series
}
