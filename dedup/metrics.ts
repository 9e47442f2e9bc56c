// Metrics of the dedup stage (docs/operations.md, "Metrics"): counted once per batch.
import { SeriesCounter } from '../core/metrics.ts'

export const dedupEvents = new SeriesCounter<'outcome'>({
  name: 'sluice_dedup_events_total',
  help: 'Events dedup passed on (accepted) or set aside as a repeat of an earlier id (duplicate)',
  labelNames: ['outcome'],
})
