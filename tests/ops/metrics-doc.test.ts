// docs/operations.md lists every metric the code registers (name, type, labels, meaning) and no
// other, and its alert rules read only metrics that exist.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { familyOf, promqlMetricNames, registered } from './metrics-registered.ts'

const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8')
const section = doc.slice(doc.indexOf('\n## Metrics\n'), doc.indexOf('\n## ', doc.indexOf('\n## Metrics\n') + 1))
const rows = [...section.matchAll(/^\| `([a-z0-9_:]+)` \| (\w+) \| (.+?) \| (.+) \|$/gm)].map((m) => ({
  name: m[1],
  type: m[2],
  labels: m[3] === '—' ? [] : [...m[3].matchAll(/`(\w+)`/g)].map((l) => l[1]),
  meaning: m[4],
}))

t.test('every registered metric has one row with its type, labels and meaning; no row without a metric', async (t) => {
  t.ok(registered.length > 40, `${registered.length} metrics registered`)
  t.same(rows.map((r) => r.name).sort(), registered.map((m) => m.name).sort())
  for (const metric of registered) {
    const row = rows.find((r) => r.name === metric.name)
    if (!row) continue
    t.equal(row.type, metric.type, `${metric.name}: type`)
    t.same(row.labels, metric.labels, `${metric.name}: labels, in order`)
    t.ok(row.meaning.length > 8, `${metric.name}: says what it means`)
  }
})

t.test('the alert rules read only registered metrics, and cover what an operator must hear of', async (t) => {
  const yamlBlock = /```yaml\n([\s\S]*?)```/.exec(section)?.[1]
  t.ok(yamlBlock, 'a block of Prometheus rules')
  const rules = parse(yamlBlock!).groups.flatMap((g: { rules: Array<{ alert: string; expr: string }> }) => g.rules)
  for (const rule of rules) {
    const names = promqlMetricNames(rule.expr)
    t.ok(names.length > 0, `${rule.alert}: reads a metric`)
    for (const name of names) t.ok(familyOf(name), `${rule.alert}: ${name} is registered`)
  }
  const read = new Set(rules.flatMap((r: { expr: string }) => promqlMetricNames(r.expr)))
  for (const needed of [
    'sluice_consumer_lag_records',
    'sluice_log_publish_failures_total',
    'sluice_http_requests_total',
    'sluice_ready',
    'sluice_webhook_requests_total',
  ])
    t.ok(read.has(needed), `an alert on ${needed}`)
})

t.test('the PromQL reader finds metric names, not functions, keywords, labels or variables', async (t) => {
  t.same(
    promqlMetricNames(
      'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{job=~"$job",x="y z"}[$__rate_interval]))) / ' +
        'on (job) group_left (roles) b and deriv(sum(c)[15m:1m]) > 0',
    ),
    ['a_bucket', 'b', 'c'],
  )
})
