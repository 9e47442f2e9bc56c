// A uPlot chart: bars (optionally stacked) or lines over a time axis or categories, sized to its
// box and redrawn when the window resizes. The legend is HTML below it (uPlot's own is off), and
// the drawing is one labelled image for screen readers; the numbers are in a table beside it.
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'

export const COLORS = ['#3b82f6', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#64748b', '#ec4899', '#14b8a6']

export interface ChartSeries {
  label: string
  values: Array<number | null>
  color: string
}

export interface ChartProps {
  kind: 'bar' | 'line'
  /** x values: seconds when `time`, else 0..n-1 with `categories` naming each. */
  x: number[]
  time?: boolean
  categories?: string[]
  series: ChartSeries[]
  /** Bars stacked, the first series at the bottom. */
  stacked?: boolean
  height?: number
  label: string
  /** Counts: y ticks at whole numbers only. */
  integer?: boolean
  /** The x axis spans at least this many seconds (one busy minute is a bar in context, not the whole axis). */
  minSpan?: number
}

const timeLabel = (seconds: number, span: number) => {
  const date = new Date(seconds * 1000)
  if (span > 2 * 86_400) return date.toLocaleDateString([], { month: 'short', day: 'numeric' })
  return date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
}

export function Chart(props: ChartProps) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = box.current
    if (!el || props.x.length === 0) return
    const height = props.height ?? 160
    const n = props.x.length
    // Stacked: series k holds the sums of 0..k, drawn top first so each shows its own slice.
    const values = props.stacked
      ? props.series.map((_, k) =>
          props.x.map((_x, i) => props.series.slice(0, k + 1).reduce((sum, s) => sum + (s.values[i] ?? 0), 0)),
        )
      : props.series.map((s) => s.values)
    const order = props.stacked
      ? props.series.map((_, i) => props.series.length - 1 - i)
      : props.series.map((_, i) => i)
    const step = n > 1 ? props.x[1] - props.x[0] : 60
    const first = props.x[0]
    const last = props.x[n - 1]
    const range: uPlot.Range.MinMax = props.time
      ? [Math.min(first, last - (props.minSpan ?? 0)) - step / 2, last + step / 2]
      : [-0.5, n - 0.5]
    const bars = uPlot.paths.bars!({ size: [0.8, 40, 2], align: 0 })
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height,
        series: [
          {},
          ...order.map((k) => ({
            label: props.series[k].label,
            stroke: props.series[k].color,
            fill: props.kind === 'bar' ? props.series[k].color : undefined,
            width: props.kind === 'bar' ? 0 : 2,
            points: { show: props.kind === 'line' && n < 40 },
            ...(props.kind === 'bar' && { paths: bars }),
          })),
        ],
        scales: {
          x: { time: props.time === true, auto: false, range },
          y: { range: (_u, min, max) => [Math.min(0, min), Math.max(1, max)] },
        },
        axes: [
          {
            stroke: 'currentColor',
            space: props.time ? 70 : 40,
            ...(props.time
              ? { values: (_u: uPlot, splits: number[]) => splits.map((s) => timeLabel(s, last - first)) }
              : {
                  splits: () => props.x,
                  // As many characters as a category's width holds (about 7 px each), at least 3.
                  values: (u: uPlot, splits: number[]) =>
                    splits.map((s) =>
                      clip(props.categories?.[s] ?? String(s), Math.max(3, Math.floor(u.width / n / 8) - 1)),
                    ),
                }),
          },
          { stroke: 'currentColor', size: 50, ...(props.integer && { incrs: WHOLE_STEPS }) },
        ],
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
      },
      [props.x, ...order.map((k) => values[k])] as uPlot.AlignedData,
      el,
    )
    const resize = () => plot.setSize({ width: el.clientWidth, height })
    window.addEventListener('resize', resize)
    return () => {
      window.removeEventListener('resize', resize)
      plot.destroy()
    }
  }, [props.kind, props.x, props.series, props.categories, props.stacked, props.time, props.height])
  return (
    <>
      <div ref={box} class="chart-plot" role="img" aria-label={props.label} />
      <ul class="chart-legend">
        {props.series.map((s) => (
          <li key={s.label} title={s.label}>
            <span class="swatch" style={{ background: s.color }} aria-hidden="true" />
            {s.label}
          </li>
        ))}
      </ul>
    </>
  )
}

/** 1, 2, 5, 10, 20, 50, … : tick steps for counts. */
const WHOLE_STEPS = Array.from({ length: 27 }, (_, i) => [1, 2, 5][i % 3] * 10 ** Math.floor(i / 3))

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)
