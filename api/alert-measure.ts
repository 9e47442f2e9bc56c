// What an alert rule measures, read from the stores every api process shares (the request store and
// the run store: RocksDB embedded, ClickHouse distributed), so the one evaluator sees every node's
// work. Failures count by the newest attempt: a failed request replayed after a fix, or a failed run
// retried to success, no longer counts, and its incident resolves.
import type { AlertRuleDoc } from '../control/types.ts'
import type { Webhooks } from '../control/webhooks.ts'
import type { RunStore } from '../store/runs-types.ts'
import type { WebhookRequestStore } from '../store/requests-types.ts'

const PAGE = 500
/** A window holding more than this many requests or runs is measured on its newest ones. */
const MAX_SCANNED = 20_000

export interface MeasureDeps {
  webhooks: Pick<Webhooks, 'get'>
  requests: Pick<WebhookRequestStore, 'list' | 'count'>
  runs: Pick<RunStore, 'queryRuns'>
  functionExists(env: string, key: string): boolean
}

const value = (metric: AlertRuleDoc['metric'], failed: number, total: number) =>
  metric === 'failure_rate' ? (total === 0 ? 0 : Math.round((failed / total) * 1000) / 1000) : failed

export function createMeasure(deps: MeasureDeps) {
  async function webhook(rule: AlertRuleDoc, since: number): Promise<number | undefined> {
    const id = rule.target.id
    if (!deps.webhooks.get(id)) return undefined
    if (rule.metric === 'held_requests') return deps.requests.count(id, 'held')
    let failed = 0
    let total = 0
    let cursor: string | undefined
    do {
      const page = await deps.requests.list({ webhookId: id, limit: PAGE, cursor })
      for (const r of page.requests) {
        if (r.request.receivedAt < since) return value(rule.metric, failed, total)
        if (r.status === 'held') continue
        total++
        if (r.status === 'failed') failed++
      }
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined && total < MAX_SCANNED)
    return value(rule.metric, failed, total)
  }

  async function fn(rule: AlertRuleDoc, since: number): Promise<number | undefined> {
    const slash = rule.target.id.indexOf('/')
    const env = rule.target.id.slice(0, slash)
    const key = rule.target.id.slice(slash + 1)
    if (!deps.functionExists(env, key)) return undefined
    let failed = 0
    let total = 0
    let cursor: string | undefined
    do {
      const page = await deps.runs.queryRuns({ functionId: key, env, limit: PAGE, cursor })
      for (const run of page.runs) {
        if (run.queuedAt < since) return value(rule.metric, failed, total)
        total++
        if (run.status === 'failed') failed++
      }
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined && total < MAX_SCANNED)
    return value(rule.metric, failed, total)
  }

  return function measure(rule: AlertRuleDoc): Promise<number | undefined> {
    const since = Date.now() - rule.windowMs
    return rule.target.kind === 'webhook' ? webhook(rule, since) : fn(rule, since)
  }
}
