// Events per minute (or wider bucket) by name, counted by the server (GET /v1/insights/events):
// the most frequent names stacked, the rest as "other". Shared by the Events page (its filters'
// range, refreshed while events arrive live) and the Insights page.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { api, query, signingKey } from '../api.ts'
import { Chart, COLORS, type ChartSeries } from './chart.tsx'
import { ErrorMessage } from './common.tsx'

export interface EventCounts {
  from: number
  to: number
  bucket_ms: number
  buckets: number[]
  series: Array<{ name: string; total: number; counts: number[] }>
  other: { total: number; counts: number[] } | null
  truncated: boolean
}

const OTHER_COLOR = '#94a3b8'
/** At most one reload of the counts in this long while events arrive live. */
const REFRESH_MS = 3_000

export function bucketName(ms: number): string {
  if (ms === 60_000) return 'minute'
  if (ms < 3_600_000) return `${ms / 60_000} minutes`
  if (ms === 3_600_000) return 'hour'
  if (ms < 86_400_000) return `${ms / 3_600_000} hours`
  return 'day'
}

export function rangeName(from: number, to: number): string {
  const hours = (to - from) / 3_600_000
  if (Math.abs(to - Date.now()) < 60_000) {
    if (hours <= 1) return 'the last hour'
    if (hours < 48) return `the last ${Math.round(hours)} hours`
    return `the last ${Math.round(hours / 24)} days`
  }
  return `${new Date(from).toLocaleString()} – ${new Date(to).toLocaleString()}`
}

/**
 * The counts of a range (from/to absent: the last hour); `refresh` changing reloads them, at most
 * every REFRESH_MS. Nothing is asked while `wait` is true (the page's own list loads first).
 */
export function useEventCounts(
  params: { from?: number; to?: number; env: string; name?: string },
  refresh = 0,
  wait = false,
) {
  /** `keyOfError`: the signing key the failed request was sent with. */
  const [state, setState] = useState<{ data?: EventCounts; error?: Error; keyOfError?: string }>({})
  const key = JSON.stringify(params)
  const last = useRef(0)
  useEffect(() => {
    if (wait) return
    let current = true
    const delay = refresh === 0 ? 0 : Math.max(0, last.current + REFRESH_MS - Date.now())
    const timer = setTimeout(() => {
      last.current = Date.now()
      const sentWith = signingKey.value
      api<{ data: EventCounts }>('GET', `/v1/insights/events${query(params)}`).then(
        (r) => current && setState({ data: r.data }),
        (error: Error) => current && setState({ error, keyOfError: sentWith }),
      )
    }, delay)
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [key, refresh, signingKey.value, wait])
  // An error answered to another signing key (UNAUTHORIZED before one was entered) says nothing of
  // this one: not shown while the counts are asked for again, once the page's list has loaded.
  return state.error && state.keyOfError !== signingKey.value ? { data: state.data } : state
}

export function EventsChart({ counts, error }: { counts?: EventCounts; error?: Error }) {
  const chart = useMemo(() => {
    if (!counts) return undefined
    const series: ChartSeries[] = counts.series.map((s, i) => ({
      label: s.name,
      values: s.counts,
      color: COLORS[i % COLORS.length],
    }))
    if (counts.other) series.push({ label: 'other names', values: counts.other.counts, color: OTHER_COLOR })
    return { x: counts.buckets.map((b) => b / 1000), series }
  }, [counts])
  if (error) return <ErrorMessage error={error} />
  if (!counts || !chart) return null
  const total = counts.series.reduce((n, s) => n + s.total, counts.other?.total ?? 0)
  const per = bucketName(counts.bucket_ms)
  const caption = `Events per ${per} by name, ${rangeName(counts.from, counts.to)}`
  return (
    <figure class="chart" id="events-chart" data-total={total}>
      <figcaption>
        {caption}: {total.toLocaleString()} event{total === 1 ? '' : 's'}
        {counts.truncated && ' (partly counted: the range holds more events than one count reads; narrow it)'}
      </figcaption>
      {total === 0 ? (
        <p class="muted chart-empty">No events in this range.</p>
      ) : (
        <Chart
          kind="bar"
          time
          stacked
          integer
          x={chart.x}
          series={chart.series}
          minSpan={10 * 60}
          height={140}
          label={`${caption}: ${[...counts.series.map((s) => `${s.name} ${s.total}`), ...(counts.other ? [`other names ${counts.other.total}`] : [])].join(', ')}`}
        />
      )}
    </figure>
  )
}
