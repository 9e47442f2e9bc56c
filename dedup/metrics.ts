// Metrics of the dedup stage (docs/operations.md, "Metrics"): counted once per batch.
import { counter } from '../core/metrics.ts'

export const dedupEvents = counter<'outcome'>({
  name: 'sluice_dedup_events_total',
  help: 'Events dedup passed on (accepted) or set aside as a repeat of an earlier id (duplicate)',
  labelNames: ['outcome'],
})
