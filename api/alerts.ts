// `/v1/alerts`: alert rules (per webhook or per function) and their incidents. The signing secret
// is in the creation answer only. See docs/webhooks.md, "Alerts".
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { AlertRules } from '../control/alerts.ts'
import type { AlertIncidentDoc, AlertRuleDoc, ControlStore } from '../control/types.ts'
import type { Webhooks } from '../control/webhooks.ts'
import { SluiceError } from '../core/errors.ts'
import { AlertIncident, AlertRule, CreateAlertRule, CreatedAlertRule, IncidentsQuery } from './alert-schemas.ts'
import { errors, IdParams, List, One } from './schemas.ts'

export interface AlertApiDeps {
  rules: AlertRules
  webhooks: Pick<Webhooks, 'mustGet'>
  control: Pick<ControlStore, 'get'>
}

const iso = (ms: number) => new Date(ms).toISOString()
const tags = ['Alerts']
const DEFAULT_WINDOW_SECONDS = 300

export function presentRule(r: AlertRuleDoc) {
  return {
    id: r.id,
    name: r.name,
    target: r.target,
    env: r.env,
    metric: r.metric,
    threshold: r.threshold,
    window_seconds: r.windowMs / 1000,
    endpoint: new URL(r.endpoint).origin,
    created_at: iso(r.createdAt),
  }
}

/** Where the failing requests or runs are listed (the dashboard links the same). */
export function failingPath(rule: Pick<AlertRuleDoc, 'target' | 'metric'>): string {
  if (rule.target.kind === 'webhook') {
    const status = rule.metric === 'held_requests' ? 'held' : 'failed'
    return `/v1/webhooks/${rule.target.id}/requests?status=${status}`
  }
  const slash = rule.target.id.indexOf('/')
  const env = rule.target.id.slice(0, slash)
  const key = rule.target.id.slice(slash + 1)
  return `/v1/runs?function=${encodeURIComponent(key)}&env=${encodeURIComponent(env)}&status=failed`
}

function presentIncident(i: AlertIncidentDoc, rule: AlertRuleDoc) {
  return {
    id: i.id,
    rule_id: i.ruleId,
    rule_name: rule.name,
    target: rule.target,
    metric: rule.metric,
    threshold: rule.threshold,
    status: i.status,
    opened_at: iso(i.openedAt),
    resolved_at: i.resolvedAt === undefined ? null : iso(i.resolvedAt),
    opened_value: i.openedValue,
    value: i.value,
    notification: { ...i.notification, error: i.notification.error ?? null },
    failing: failingPath(rule),
  }
}

export function alertRoutes(deps: AlertApiDeps) {
  return async (app: FastifyInstance) => {
    app.post<{ Body: Static<typeof CreateAlertRule> }>(
      '/v1/alerts',
      {
        schema: {
          permission: 'alerts:write',
          tags,
          summary: 'Create an alert rule; the answer shows its signing secret, once',
          body: CreateAlertRule,
          response: { 201: One(CreatedAlertRule), ...errors(400, 401, 404) },
        },
      },
      async (request, reply) => {
        const body = request.body
        if ((body.webhook_id === undefined) === (body.function === undefined))
          throw new SluiceError('ALERT_RULE_INVALID', 'webhook_id: give either webhook_id or function, not both')
        let target: AlertRuleDoc['target']
        let env: string
        if (body.webhook_id !== undefined) {
          const webhook = deps.webhooks.mustGet(body.webhook_id)
          target = { kind: 'webhook', id: webhook.id }
          env = webhook.env
        } else {
          env = body.env || 'production'
          const id = `${env}/${body.function}`
          if (!deps.control.get('function', id))
            throw new SluiceError('NOT_FOUND', `function "${body.function}" is not registered in environment "${env}"`)
          target = { kind: 'function', id }
        }
        const doc = await deps.rules.create({
          name: body.name,
          target,
          env,
          metric: body.metric,
          threshold: body.threshold,
          windowSeconds: body.window_seconds ?? DEFAULT_WINDOW_SECONDS,
          endpoint: body.endpoint,
        })
        reply.code(201)
        return { data: { ...presentRule(doc), secret: doc.secret } }
      },
    )
    app.get(
      '/v1/alerts',
      {
        schema: {
          permission: 'alerts:read',
          tags,
          summary: 'Alert rules',
          response: { 200: List(AlertRule), ...errors(401) },
        },
      },
      async () => ({ data: deps.rules.list().map(presentRule), metadata: {} }),
    )
    app.get<{ Querystring: Static<typeof IncidentsQuery> }>(
      '/v1/alerts/incidents',
      {
        schema: {
          permission: 'alerts:read',
          tags,
          summary: 'Incidents, newest first: open ones and the recent resolved ones',
          querystring: IncidentsQuery,
          response: { 200: List(AlertIncident), ...errors(400, 401) },
        },
      },
      async (request) => {
        const data = deps.rules.incidents({ status: request.query.status }).flatMap((i) => {
          const rule = deps.rules.get(i.ruleId)
          return rule ? [presentIncident(i, rule)] : []
        })
        return { data, metadata: {} }
      },
    )
    app.get<{ Params: { id: string } }>(
      '/v1/alerts/:id',
      {
        schema: {
          permission: 'alerts:read',
          tags,
          summary: 'One alert rule',
          params: IdParams('Alert rule ID (al_…)'),
          response: { 200: One(AlertRule), ...errors(401, 404) },
        },
      },
      async (request) => ({ data: presentRule(deps.rules.mustGet(request.params.id)) }),
    )
    app.delete<{ Params: { id: string } }>(
      '/v1/alerts/:id',
      {
        schema: {
          permission: 'alerts:write',
          tags,
          summary: 'Delete an alert rule and its incidents',
          params: IdParams('Alert rule ID (al_…)'),
          response: { 200: One(AlertRule), ...errors(401, 404) },
        },
      },
      async (request) => ({ data: presentRule(await deps.rules.remove(request.params.id)) }),
    )
  }
}
