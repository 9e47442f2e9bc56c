// deploy/grafana/sluice.json: a dashboard Grafana 9+ imports (schemaVersion ≥ 36) with a Prometheus
// data source variable, whose every query reads only metrics the code registers, and which shows
// what the issue asked for: ingest rate and errors by code, p99 latency, consumer lag per stage,
// dedup rate, webhook failures, run outcomes.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { familyOf, promqlMetricNames } from './metrics-registered.ts'

const dashboard = JSON.parse(readFileSync(new URL('../../deploy/grafana/sluice.json', import.meta.url), 'utf8'))
type Panel = { type: string; title: string; datasource?: { uid: string }; targets?: Array<{ expr: string }> }
const panels: Panel[] = dashboard.panels.flatMap((p: Panel & { panels?: Panel[] }) => [p, ...(p.panels ?? [])])
const queried = panels.filter((p) => p.type !== 'row')
const exprs = queried.flatMap((p) => (p.targets ?? []).map((target) => ({ panel: p.title, expr: target.expr })))

t.test('schemaVersion ≥ 36 and a Prometheus data source variable that every panel uses', async (t) => {
  t.ok(dashboard.schemaVersion >= 36, `schemaVersion ${dashboard.schemaVersion}`)
  const variables = dashboard.templating.list
  t.match(
    variables.find((v: { type: string }) => v.type === 'datasource'),
    { name: 'datasource', query: 'prometheus' },
  )
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a template
  for (const panel of queried) t.equal(panel.datasource?.uid, '${datasource}', `${panel.title}: the chosen data source`)
  const ids = dashboard.panels.map((p: { id: number }) => p.id)
  t.equal(new Set(ids).size, ids.length, 'panel ids are unique')
})

t.test('every query reads only registered metrics', async (t) => {
  t.ok(exprs.length >= 20, `${exprs.length} queries`)
  for (const { panel, expr } of exprs) {
    const names = promqlMetricNames(expr)
    t.ok(names.length > 0, `${panel}: reads a metric`)
    for (const name of names) t.ok(familyOf(name), `${panel}: ${name} is registered`)
  }
})

t.test('it shows ingest rate, errors by code, p99 latency, lag per stage, dedup, webhook failures, runs', async (t) => {
  const shows = (pattern: RegExp) => exprs.some(({ expr }) => pattern.test(expr))
  t.ok(shows(/rate\(sluice_ingest_events_accepted_total/), 'ingest rate')
  t.ok(shows(/by \(code, api\) \(rate\(sluice_ingest_requests_rejected_total/), 'ingest errors by code')
  t.ok(shows(/histogram_quantile\(0\.99, .*sluice_http_request_duration_seconds_bucket/), 'p99 latency')
  t.ok(shows(/sum by \(group\) \(sluice_consumer_lag_records/), 'consumer lag per stage')
  t.ok(shows(/sluice_dedup_events_total/), 'dedup rate')
  t.ok(shows(/by \(code\) \(rate\(sluice_webhook_requests_total\{[^}]*failed/), 'webhook failures by code')
  t.ok(shows(/by \(outcome\) \(rate\(sluice_function_runs_total/), 'run outcomes')
  t.ok(
    shows(/by \(function, reason\) \(rate\(sluice_function_runs_skipped_total/),
    'events flow control skipped, and why',
  )
})
