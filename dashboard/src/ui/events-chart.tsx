// Events per minute by name (the five most frequent), over the events the list has loaded.
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'

const COLORS = ['#3b82f6', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6']
const MINUTE = 60_000

export function perMinute(events: Array<{ name: string; received_at: number }>) {
  const counts = new Map<string, number>()
  for (const e of events) counts.set(e.name, (counts.get(e.name) ?? 0) + 1)
  const names = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, COLORS.length)
    .map(([n]) => n)
  const times = events.map((e) => e.received_at)
  const first = Math.floor(Math.min(...times) / MINUTE)
  const last = Math.floor(Math.max(...times) / MINUTE)
  const minutes = Array.from({ length: Math.min(last - first + 1, 24 * 60) }, (_, i) => (last - i) * 60).reverse()
  const series = names.map((name) => {
    const buckets = new Map<number, number>()
    for (const e of events)
      if (e.name === name)
        buckets.set(
          Math.floor(e.received_at / MINUTE) * 60,
          (buckets.get(Math.floor(e.received_at / MINUTE) * 60) ?? 0) + 1,
        )
    return minutes.map((m) => buckets.get(m) ?? 0)
  })
  return { names, data: [minutes, ...series] as uPlot.AlignedData }
}

export function EventsChart({ events }: { events: Array<{ name: string; received_at: number }> }) {
  const box = useRef<HTMLDivElement>(null)
  const { names, data } = events.length ? perMinute(events) : { names: [], data: [[]] as unknown as uPlot.AlignedData }
  useEffect(() => {
    if (!box.current || events.length === 0) return
    const minutes = data[0] as number[]
    // At least ten minutes wide, so one busy minute is a bar in context rather than the whole axis.
    const range: uPlot.Range.MinMax = [
      Math.min(minutes[0], minutes[minutes.length - 1] - 540) - 30,
      minutes[minutes.length - 1] + 30,
    ]
    // Stacked bars: series k holds the counts of names 0..k, drawn tallest first so each name shows its own slice.
    const counts = data.slice(1) as number[][]
    const stacked = counts.map((_, k) =>
      minutes.map((_m, i) => counts.slice(0, k + 1).reduce((sum, c) => sum + c[i], 0)),
    )
    const order = names.map((_, i) => names.length - 1 - i)
    const plot = new uPlot(
      {
        width: box.current.clientWidth,
        height: 140,
        series: [
          {},
          ...order.map((k) => ({
            label: names[k],
            stroke: COLORS[k],
            fill: COLORS[k],
            width: 0,
            points: { show: false },
            paths: uPlot.paths.bars!({ size: [0.8, 24] }),
          })),
        ],
        scales: { x: { time: true, auto: false, range }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [
          {
            stroke: 'currentColor',
            space: 70,
            incrs: [60, 300, 600, 1800, 3600, 21600, 86400],
            values: (_u, splits) =>
              splits.map((s) => new Date(s * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })),
          },
          { stroke: 'currentColor', size: 40 },
        ],
        legend: { show: false },
      },
      [minutes, ...order.map((k) => stacked[k])] as uPlot.AlignedData,
      box.current,
    )
    const resize = () => box.current && plot.setSize({ width: box.current.clientWidth, height: 140 })
    window.addEventListener('resize', resize)
    return () => {
      window.removeEventListener('resize', resize)
      plot.destroy()
    }
  }, [events])
  if (events.length === 0) return null
  return (
    <figure class="chart">
      <figcaption>Events per minute by name, of the {events.length} loaded</figcaption>
      <div ref={box} role="img" aria-label={`Events per minute by name: ${names.join(', ')}`} />
      <ul class="chart-legend">
        {names.map((name, i) => (
          <li key={name}>
            <span class="swatch" style={{ background: COLORS[i] }} aria-hidden="true" />
            {name}
          </li>
        ))}
      </ul>
    </figure>
  )
}
