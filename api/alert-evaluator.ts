// The alert evaluator: every interval it measures each rule (api/alert-measure.ts) and opens or
// resolves its incident; each transition emits `sluice/alert.fired|resolved` onto `incoming` (so
// functions can be triggered by it) and posts a signed notification in the background. One api
// process evaluates, by lease in the control store: a claim is acted on from the next interval,
// once every process has seen it, so two processes never both evaluate for long. docs/webhooks.md.
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import type { Logger } from 'pino'
import type { Output } from '../bus/output.ts'
import { toEventRecords, type EventRecord } from '../core/event.ts'
import { seededUlids } from '../core/ids.ts'
import { sleep } from '../core/retry.ts'
import type { AlertRules } from '../control/alerts.ts'
import type { AlertIncidentDoc, AlertRuleDoc, ControlStore } from '../control/types.ts'
import { alertData, type Notify } from './alert-notify.ts'
import { alertTransitions } from './alert-metrics.ts'

export interface AlertEvaluatorDeps {
  control: Pick<ControlStore, 'get' | 'put'>
  rules: AlertRules
  /** The rule's value now; undefined when its webhook or function is gone (nothing to say). */
  measure(rule: AlertRuleDoc): Promise<number | undefined>
  notify: Notify
  incoming: Output<EventRecord>
  log: Logger
}

export interface AlertEvaluatorConfig {
  intervalMs: number
}

const LEASE_ID = 'evaluator'
const owner = `${hostname()}:${process.pid}`

export function createAlertEvaluator(deps: AlertEvaluatorDeps, config: AlertEvaluatorConfig) {
  const { rules, log } = deps
  let stopping = new AbortController()
  let loop: Promise<void> | undefined
  const sending = new Set<Promise<void>>()

  /** Whether this process evaluates now: it held the lease since the last interval; the lease is renewed. */
  async function leading(): Promise<boolean> {
    const lease = deps.control.get('alertLease', LEASE_ID)
    const now = Date.now()
    if (lease && lease.owner !== owner && lease.until > now) return false
    const held = lease?.owner === owner && lease.until > now
    await deps.control.put('alertLease', LEASE_ID, { id: LEASE_ID, owner, until: now + 3 * config.intervalMs })
    return held
  }

  /** The event, with IDs derived from the incident and transition: emitted twice, it is deduplicated. */
  async function emit(rule: AlertRuleDoc, incident: AlertIncidentDoc, event: 'fired' | 'resolved'): Promise<void> {
    const at = event === 'fired' ? incident.openedAt : (incident.resolvedAt ?? Date.now())
    const entropy = createHash('sha256').update(`${incident.id}:${event}`).digest().subarray(0, 10).toString('base64')
    const [internalId] = seededUlids(`${at},${entropy}`, 1)
    const records = toEventRecords([{ name: `sluice/alert.${event}`, data: alertData(rule, incident) }], {
      internalIds: [internalId],
      env: rule.env,
      receivedAt: at,
      source: { kind: 'api' },
    })
    await deps.incoming.publish(records)
  }

  /** In the background: a slow or failing endpoint holds up nothing; its outcome lands on the incident. */
  function send(rule: AlertRuleDoc, incident: AlertIncidentDoc, event: 'fired' | 'resolved'): void {
    const update = async (notification: AlertIncidentDoc['notification']) => {
      const current = deps.control.get('alertIncident', incident.id)
      if (current && current.notification.event === event) await rules.saveIncident({ ...current, notification })
    }
    const attempt = deps
      .notify(
        rule,
        incident,
        event,
        (attempts, error) => {
          update({ event, status: 'pending', attempts, error }).catch(() => {})
        },
        stopping.signal,
      )
      .then((outcome) =>
        update(
          outcome.ok
            ? { event, status: 'delivered', attempts: outcome.attempts }
            : { event, status: 'failed', attempts: outcome.attempts, error: outcome.error },
        ),
      )
      .catch((err) => log.warn({ err, rule: rule.id }, 'recording an alert notification outcome failed'))
      .finally(() => sending.delete(attempt))
    sending.add(attempt)
  }

  async function evaluate(rule: AlertRuleDoc): Promise<void> {
    const value = await deps.measure(rule)
    if (value === undefined) return
    const firing = value > rule.threshold
    const open = rules.openIncident(rule.id)
    if (firing && !open) {
      const incident = await rules.open(rule, value)
      alertTransitions.inc({ event: 'fired' })
      log.info({ rule: rule.id, incident: incident.id, value }, 'alert fired')
      await emit(rule, incident, 'fired')
      send(rule, incident, 'fired')
    } else if (!firing && open) {
      const resolved: AlertIncidentDoc = {
        ...open,
        status: 'resolved',
        resolvedAt: Date.now(),
        value,
        notification: { event: 'resolved', status: 'pending', attempts: 0 },
      }
      await rules.saveIncident(resolved)
      alertTransitions.inc({ event: 'resolved' })
      log.info({ rule: rule.id, incident: open.id, value }, 'alert resolved')
      await emit(rule, resolved, 'resolved')
      send(rule, resolved, 'resolved')
    } else if (open && open.value !== value) {
      await rules.saveIncident({ ...open, value })
    }
  }

  async function run(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        // No rule, no lease: a deployment without alerts writes nothing to the control topic.
        if (rules.list().length > 0 && (await leading()))
          for (const rule of rules.list()) {
            if (stopping.signal.aborted) break
            await evaluate(rule).catch((err) => log.warn({ err, rule: rule.id }, 'evaluating an alert rule failed'))
          }
      } catch (err) {
        log.warn({ err }, 'the alert evaluator could not take its lease; trying again')
      }
      await sleep(config.intervalMs, stopping.signal)
    }
  }

  return {
    async start(): Promise<void> {
      stopping = new AbortController()
      loop = run()
    },
    async stop(): Promise<void> {
      stopping.abort()
      await loop
      await Promise.allSettled([...sending])
    },
  }
}
