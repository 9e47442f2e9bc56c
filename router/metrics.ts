// Metrics of the router stage (docs/operations.md, "Metrics").
import { counter } from '../core/metrics.ts'

export const waitsMatched = counter({
  name: 'sluice_waits_matched_total',
  help: 'Waits for events (step.waitForEvent) resumed and runs cancelled (cancelOn) by a matching event',
})
