// Alert notifications: a POST to the rule's endpoint, signed with Standard Webhooks (webhook-id,
// webhook-timestamp, webhook-signature: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the
// `whsec_` secret's key), a Slack message body for a Slack incoming webhook. Retried with backoff by
// the one retry module; the outcome is a value, and never holds up anything but its own incident.
import { createHmac } from 'node:crypto'
import { retryPolicies, withRetry, type RetryPolicy } from '../core/retry.ts'
import type { AlertIncidentDoc, AlertRuleDoc } from '../control/types.ts'
import { alertNotifications } from './alert-metrics.ts'

const TIMEOUT_MS = 10_000

export type NotifyOutcome = { ok: true; attempts: number } | { ok: false; attempts: number; error: string }

export function signStandardWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`
}

/** What `sluice/alert.fired|resolved` carries, and the notification's `data`. */
export function alertData(rule: AlertRuleDoc, incident: AlertIncidentDoc) {
  return {
    rule: {
      id: rule.id,
      name: rule.name,
      target: rule.target,
      metric: rule.metric,
      threshold: rule.threshold,
      window_seconds: rule.windowMs / 1000,
    },
    incident: {
      id: incident.id,
      status: incident.status,
      opened_at: new Date(incident.openedAt).toISOString(),
      resolved_at: incident.resolvedAt === undefined ? null : new Date(incident.resolvedAt).toISOString(),
      value: incident.value,
    },
  }
}

const isSlack = (endpoint: string) => new URL(endpoint).hostname === 'hooks.slack.com'

export function notificationBody(rule: AlertRuleDoc, incident: AlertIncidentDoc, event: 'fired' | 'resolved'): string {
  if (isSlack(rule.endpoint)) {
    const what = `${rule.metric} ${incident.value} (threshold ${rule.threshold}, ${rule.windowMs / 1000} s)`
    const text =
      event === 'fired'
        ? `:rotating_light: Sluice alert *${rule.name}* fired: ${rule.target.kind} ${rule.target.id}: ${what}`
        : `:white_check_mark: Sluice alert *${rule.name}* resolved: ${rule.target.kind} ${rule.target.id}: ${what}`
    return JSON.stringify({ text })
  }
  return JSON.stringify({
    type: `alert.${event}`,
    timestamp: new Date().toISOString(),
    data: alertData(rule, incident),
  })
}

export function createNotifier(config: { policy?: RetryPolicy } = {}) {
  return async function notify(
    rule: AlertRuleDoc,
    incident: AlertIncidentDoc,
    event: 'fired' | 'resolved',
    onAttempt: (attempts: number, error: string) => void = () => {},
    /** Stopping: no further attempt (the outcome so far is recorded). */
    signal?: AbortSignal,
  ): Promise<NotifyOutcome> {
    const id = `msg_${incident.id}_${event}` // the same across retries: a receiver dedups by it
    const body = notificationBody(rule, incident, event)
    let attempts = 0
    try {
      await withRetry(
        async () => {
          attempts++
          const timestamp = Math.floor(Date.now() / 1000)
          const response = await fetch(rule.endpoint, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'webhook-id': id,
              'webhook-timestamp': String(timestamp),
              'webhook-signature': signStandardWebhook(rule.secret, id, timestamp, body),
            },
            body,
            signal: AbortSignal.timeout(TIMEOUT_MS),
            redirect: 'manual',
          })
          await response.body?.cancel()
          if (!response.ok) throw new Error(`the endpoint answered ${response.status}`)
        },
        {
          policy: config.policy ?? retryPolicies.alertNotify,
          signal,
          onRetry: (err) => {
            alertNotifications.inc({ outcome: 'retried' })
            onAttempt(attempts, describe(err))
          },
        },
      )
      alertNotifications.inc({ outcome: 'delivered' })
      return { ok: true, attempts }
    } catch (err) {
      alertNotifications.inc({ outcome: 'failed' })
      return { ok: false, attempts, error: describe(err) }
    }
  }
}

export type Notify = ReturnType<typeof createNotifier>

/** The cause without the URL (it may carry a token, as Slack's do). */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return 'the request failed'
  const cause = (err as { cause?: { code?: string } }).cause?.code
  return cause ? `${err.message} (${cause})` : err.message
}
