// Metrics of alerting (docs/operations.md, "Metrics"). Never labelled by rule or endpoint.
import { counter } from '../core/metrics.ts'

export const alertNotifications = counter<'outcome'>({
  name: 'sluice_alert_notifications_total',
  help: 'Alert notification attempts to their endpoints, by outcome (delivered, retried, failed: every retry spent)',
  labelNames: ['outcome'],
})

export const alertTransitions = counter<'event'>({
  name: 'sluice_alert_incidents_total',
  help: 'Alert incidents opened (fired) and closed (resolved)',
  labelNames: ['event'],
})
