// What the code registers in a process's metrics registry (every stage and both composition roots
// loaded, the process defaults started), and the metric names a PromQL expression reads, so the
// docs and the Grafana dashboard can be checked against the code.
import '../../server/embedded.ts'
import '../../server/distributed.ts'
import { registry, startProcessMetrics } from '../../core/metrics.ts'

startProcessMetrics()

export interface Registered {
  name: string
  type: string
  labels: string[]
}

export const registered: Registered[] = registry.getMetricsAsArray().map((m) => {
  const metric = m as unknown as { name: string; type: string; labelNames: string[] }
  return { name: metric.name, type: metric.type, labels: [...metric.labelNames] }
})

const byName = new Map(registered.map((m) => [m.name, m]))

/** The registered metric a series name belongs to: itself, or the histogram of a _bucket/_sum/_count series. */
export function familyOf(series: string): Registered | undefined {
  const direct = byName.get(series)
  if (direct) return direct
  const histogram = byName.get(series.replace(/_(bucket|sum|count)$/, ''))
  return histogram?.type === 'histogram' ? histogram : undefined
}

const NOT_METRICS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless'])
const NOT_METRICS_TOO = new Set(['bool', 'offset', 'inf', 'nan'])

/** The metric names a PromQL expression selects (functions, keywords, labels and variables left out). */
export function promqlMetricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // label lists
    .replace(/\$\{?\w+\}?/g, ' ') // dashboard variables
  const names: string[] = []
  for (const match of bare.matchAll(/(?<![\w.])[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = match[0]
    const isCall = bare
      .slice(match.index + word.length)
      .trimStart()
      .startsWith('(')
    if (!isCall && !NOT_METRICS.has(word) && !NOT_METRICS_TOO.has(word.toLowerCase())) names.push(word)
  }
  return names
}
