// The shapes of `/v1/alerts`. Types only: ranges, metrics per target and the endpoint's scheme are
// the domain's (control/alerts.ts), so they all answer ALERT_RULE_INVALID naming the field.
import { Type } from '@sinclair/typebox'
import { Literals, Nullable, Time } from './schemas.ts'

export const CreateAlertRule = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    webhook_id: Type.Optional(Type.String({ description: 'Watch this webhook (or give function)' })),
    function: Type.Optional(Type.String({ description: 'Watch this function: <app id>-<function id>' })),
    env: Type.Optional(Type.String({ description: "The function's environment; default production" })),
    metric: Type.String({
      description: 'webhook: failed_requests, failure_rate, held_requests; function: failed_runs, failure_rate',
    }),
    threshold: Type.Number({ description: 'Fires when the value is above it: a count, or a rate 0..1' }),
    window_seconds: Type.Optional(Type.Integer({ description: '60..86400, default 300' })),
    endpoint: Type.String({ description: 'https:// URL notified on fire and resolve (Standard Webhooks signed)' }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'stripe failing',
        webhook_id: 'wh_…',
        metric: 'failed_requests',
        threshold: 5,
        window_seconds: 300,
        endpoint: 'https://hooks.slack.com/services/T000/B000/XXXX',
      },
    ],
  },
)

const Target = Type.Object({ kind: Literals(['webhook', 'function']), id: Type.String() })

export const AlertRule = Type.Object({
  id: Type.String({ description: 'al_…' }),
  name: Type.String(),
  target: Target,
  env: Type.String({ description: 'Where its sluice/alert.* events go' }),
  metric: Type.String(),
  threshold: Type.Number(),
  window_seconds: Type.Integer(),
  endpoint: Type.String({ description: "The endpoint's origin only: its path may hold a token" }),
  created_at: Time('Creation time'),
})

export const CreatedAlertRule = Type.Object({
  ...AlertRule.properties,
  secret: Type.String({ description: 'whsec_…: verify notifications with it; shown this once' }),
})

export const AlertIncident = Type.Object({
  id: Type.String(),
  rule_id: Type.String(),
  rule_name: Type.String(),
  target: Target,
  metric: Type.String(),
  threshold: Type.Number(),
  status: Literals(['open', 'resolved']),
  opened_at: Time('When it fired'),
  resolved_at: Nullable(Time('When it resolved')),
  opened_value: Type.Number(),
  value: Type.Number({ description: 'The latest measured value' }),
  notification: Type.Object({
    event: Literals(['fired', 'resolved']),
    status: Literals(['pending', 'delivered', 'failed']),
    attempts: Type.Integer(),
    error: Nullable(Type.String()),
  }),
  failing: Type.String({ description: 'REST path of the failing requests or runs' }),
})

export const IncidentsQuery = Type.Object({ status: Type.Optional(Literals(['open', 'resolved'])) })
