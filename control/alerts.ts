// Alert rules and their incidents, in the ControlStore (small, on every node). A rule is checked
// whole before anything is written: a bad field is ALERT_RULE_INVALID naming it, and changes nothing.
// The endpoint's signing secret (Standard Webhooks, `whsec_…`) is generated here and shown once.
import { randomBytes } from 'node:crypto'
import { isIP } from 'node:net'
import { SluiceError } from '../core/errors.ts'
import { newUlid } from '../core/ids.ts'
import {
  ALERT_METRICS,
  type AlertIncidentDoc,
  type AlertMetric,
  type AlertRuleDoc,
  type AlertTargetKind,
  type ControlStore,
} from './types.ts'
import { BRANCH_GROUP } from '../core/env-names.ts'

export const ALERT_ID_PREFIX = 'al_'
export const MIN_WINDOW_SECONDS = 60
export const MAX_WINDOW_SECONDS = 86_400
export const MAX_COUNT_THRESHOLD = 1_000_000
/** Incidents kept per rule: the open one and the most recent resolved ones. */
const KEPT_INCIDENTS = 20

export interface AlertRuleInput {
  name: string
  target: { kind: AlertTargetKind; id: string }
  env: string
  metric: string
  threshold: number
  windowSeconds: number
  endpoint: string
}

export interface AlertRulesConfig {
  /** `sluice dev`: an `http://` endpoint on a loopback address is accepted (a local receiver). */
  allowLoopbackEndpoints: boolean
}

const invalid = (message: string) => new SluiceError('ALERT_RULE_INVALID', message)

export const isRate = (metric: AlertMetric) => metric === 'failure_rate'

function checkMetric(kind: AlertTargetKind, metric: string): AlertMetric {
  const allowed: readonly string[] = ALERT_METRICS[kind]
  if (!allowed.includes(metric))
    throw invalid(`metric: "${metric}" is not a ${kind} metric; use one of ${allowed.join(', ')}`)
  return metric as AlertMetric
}

function checkThreshold(metric: AlertMetric, threshold: number): number {
  if (isRate(metric)) {
    if (!(threshold >= 0 && threshold <= 1)) throw invalid(`threshold: a rate is between 0 and 1, got ${threshold}`)
    return threshold
  }
  if (!Number.isInteger(threshold) || threshold < 0 || threshold > MAX_COUNT_THRESHOLD)
    throw invalid(`threshold: a count is a whole number from 0 to ${MAX_COUNT_THRESHOLD}, got ${threshold}`)
  return threshold
}

function checkWindow(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < MIN_WINDOW_SECONDS || seconds > MAX_WINDOW_SECONDS)
    throw invalid(`window_seconds: from ${MIN_WINDOW_SECONDS} to ${MAX_WINDOW_SECONDS}, got ${seconds}`)
  return seconds * 1000
}

const isLoopback = (host: string) => {
  const bare = host.replace(/^\[|\]$/g, '')
  if (bare === 'localhost') return true
  if (isIP(bare) === 4) return bare.startsWith('127.')
  return bare === '::1'
}

function checkEndpoint(endpoint: string, config: AlertRulesConfig): string {
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    throw invalid(`endpoint: "${endpoint}" is not an absolute URL`)
  }
  if (url.username || url.password) throw invalid('endpoint: credentials in the URL are not accepted')
  if (url.protocol === 'https:') return url.href
  if (url.protocol === 'http:' && isLoopback(url.hostname)) {
    if (config.allowLoopbackEndpoints) return url.href
    throw invalid('endpoint: http:// to a loopback address is accepted by `sluice dev` only; use https://')
  }
  throw invalid(`endpoint: must be an https:// URL, got ${url.protocol}//`)
}

/** Standard Webhooks' secret form: `whsec_` + base64 of the key bytes. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`

export function createAlertRules(control: ControlStore, config: AlertRulesConfig) {
  function mustGet(id: string): AlertRuleDoc {
    const doc = control.get('alertRule', id)
    if (!doc) throw new SluiceError('NOT_FOUND', `alert rule "${id}" does not exist`)
    return doc
  }

  const incidentsOf = (ruleId: string) =>
    control
      .list('alertIncident')
      .filter((i) => i.ruleId === ruleId)
      .sort((a, b) => (a.id < b.id ? 1 : -1))

  return {
    /** Validated in full first; the doc carries the secret, which the REST answer shows this once. */
    async create(input: AlertRuleInput): Promise<AlertRuleDoc> {
      const metric = checkMetric(input.target.kind, input.metric)
      const doc: AlertRuleDoc = {
        id: ALERT_ID_PREFIX + randomBytes(12).toString('base64url'),
        name: input.name,
        target: input.target,
        env: input.env === BRANCH_GROUP ? 'production' : input.env,
        metric,
        threshold: checkThreshold(metric, input.threshold),
        windowMs: checkWindow(input.windowSeconds),
        endpoint: checkEndpoint(input.endpoint, config),
        secret: newSecret(),
        createdAt: Date.now(),
      }
      await control.put('alertRule', doc.id, doc)
      return doc
    },
    list: (): AlertRuleDoc[] => control.list('alertRule').sort((a, b) => a.createdAt - b.createdAt),
    get: (id: string) => control.get('alertRule', id),
    mustGet,
    async remove(id: string): Promise<AlertRuleDoc> {
      const doc = mustGet(id)
      await control.delete('alertRule', id)
      for (const incident of incidentsOf(id)) await control.delete('alertIncident', incident.id)
      return doc
    },
    /** Newest first; `open` only the ones still firing. */
    incidents(filter: { status?: 'open' | 'resolved'; ruleId?: string } = {}): AlertIncidentDoc[] {
      return control
        .list('alertIncident')
        .filter(
          (i) =>
            (filter.status === undefined || i.status === filter.status) &&
            (!filter.ruleId || i.ruleId === filter.ruleId),
        )
        .sort((a, b) => (a.id < b.id ? 1 : -1))
    },
    openIncident: (ruleId: string) => incidentsOf(ruleId).find((i) => i.status === 'open'),
    /** Opens an incident, forgetting the oldest resolved ones past the number kept. */
    async open(rule: AlertRuleDoc, value: number): Promise<AlertIncidentDoc> {
      const now = Date.now()
      const doc: AlertIncidentDoc = {
        id: newUlid(now),
        ruleId: rule.id,
        status: 'open',
        openedAt: now,
        openedValue: value,
        value,
        notification: { event: 'fired', status: 'pending', attempts: 0 },
      }
      await control.put('alertIncident', doc.id, doc)
      for (const old of incidentsOf(rule.id).slice(KEPT_INCIDENTS)) await control.delete('alertIncident', old.id)
      return doc
    },
    async saveIncident(doc: AlertIncidentDoc): Promise<void> {
      // A rule deleted meanwhile takes its incidents with it: a late notification outcome does not bring one back.
      if (control.get('alertRule', doc.ruleId)) await control.put('alertIncident', doc.id, doc)
    },
  }
}

export type AlertRules = ReturnType<typeof createAlertRules>
