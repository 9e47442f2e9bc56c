// The soak's chart: an SVG drawn here (two panels on one minute axis: the server's RSS, end of minute
// and the minute's max, over the band of the target from the baseline minute; and p50/p99), screenshotted
// to a PNG by the Chromium the dashboard tests use. No chart library, no network.
import { launchChromium } from '../../tests/infra/chromium.ts'

type Row = Record<string, string | number>

export interface ChartTitle {
  rate: number
  batch: number
  date: string
  /** The minute growth is measured from, and its RSS. */
  baseMinute: number
  baseMb: number
  /** RSS at the end stays under this much above the baseline minute's. */
  targetPercent: number
  /** A second line under the title: the run's verdicts. */
  note: string
}

const WIDTH = 1040
const HEIGHT = 680
const LEFT = 80
const RIGHT = 190 // room for the legend
const PANELS = [
  { top: 100, height: 280 },
  { top: 430, height: 180 },
]

export async function renderChart(path: string, rows: Row[], title: ChartTitle): Promise<void> {
  const browser = await launchChromium()
  try {
    const page = await browser.newPage({ viewport: { width: WIDTH, height: HEIGHT } })
    await page.setContent(`<!doctype html><body style="margin:0;background:#fff">${chartSvg(rows, title)}</body>`)
    await page.screenshot({ path })
  } finally {
    await browser.close()
  }
}

export function chartSvg(rows: Row[], t: ChartTitle): string {
  const minutes = rows.length
  const plotWidth = WIDTH - LEFT - RIGHT
  const x = (minute: number) => LEFT + (minute / minutes) * plotWidth
  const column = (name: string) => rows.map((r, i) => ({ minute: i + 1, value: Number(r[name]) }))
  const parts: string[] = []
  const text = (tx: number, ty: number, s: string, attrs = '') =>
    parts.push(`<text x="${tx}" y="${ty}" ${attrs}>${s}</text>`)

  text(
    LEFT,
    32,
    `Sluice soak (sluice dev): ${t.rate.toLocaleString('en')} events/s in ${t.batch}-event batches, ${t.date}`,
    'font-size="18" font-weight="bold"',
  )
  text(LEFT, 56, t.note, 'font-size="12" fill="#333"')

  const rss = [...column('RSS MiB'), ...column('max RSS MiB')].map((p) => p.value)
  const bandTop = t.baseMb * (1 + t.targetPercent / 100)
  const rssAxis = axis(Math.min(...rss, t.baseMb) * 0.95, Math.max(...rss, bandTop) * 1.02)
  const latency = [...column('p50 ms'), ...column('p99 ms')].map((p) => p.value)
  const msAxis = axis(0, Math.max(...latency, 1) * 1.1)

  const panels = [
    {
      ...PANELS[0],
      label: 'server RSS (MiB)',
      axis: rssAxis,
      series: [
        { name: 'RSS, end of minute', points: column('RSS MiB'), color: '#1f5fbf', dash: '' },
        { name: 'RSS, max in minute', points: column('max RSS MiB'), color: '#8fb3e8', dash: '6 4' },
      ],
    },
    {
      ...PANELS[1],
      label: 'latency of 2xx (ms)',
      axis: msAxis,
      series: [
        { name: 'p99', points: column('p99 ms'), color: '#c0392b', dash: '' },
        { name: 'p50', points: column('p50 ms'), color: '#e59a8f', dash: '6 4' },
      ],
    },
  ]
  for (const [index, p] of panels.entries()) {
    const y = (v: number) => p.top + p.height - ((v - p.axis.min) / (p.axis.max - p.axis.min)) * p.height
    if (index === 0) {
      // The target: RSS at the end stays under +targetPercent of the baseline minute's.
      const x0 = x(t.baseMinute)
      parts.push(
        `<rect x="${x0}" y="${y(bandTop)}" width="${x(minutes) - x0}" height="${y(t.baseMb) - y(bandTop)}" ` +
          `fill="#2e8b57" fill-opacity="0.12"/>`,
      )
      text(
        x0 + 6,
        y(bandTop) - 6,
        `+${t.targetPercent} % of minute ${t.baseMinute} (${t.baseMb} MiB)`,
        'font-size="12" fill="#2e6b47"',
      )
    }
    for (const tick of p.axis.ticks) {
      parts.push(`<line x1="${LEFT}" x2="${x(minutes)}" y1="${y(tick)}" y2="${y(tick)}" stroke="#e3e3e3"/>`)
      text(LEFT - 8, y(tick) + 4, String(tick), 'font-size="12" text-anchor="end" fill="#444"')
    }
    parts.push(`<rect x="${LEFT}" y="${p.top}" width="${plotWidth}" height="${p.height}" fill="none" stroke="#999"/>`)
    text(LEFT, p.top - 10, p.label, 'font-size="14" font-weight="bold" fill="#333"')
    for (const [i, s] of p.series.entries()) {
      const d = s.points.map((pt) => `${x(pt.minute)},${y(pt.value)}`).join(' ')
      parts.push(
        `<polyline points="${d}" fill="none" stroke="${s.color}" stroke-width="2.5" stroke-dasharray="${s.dash}"/>`,
      )
      for (const pt of s.points)
        parts.push(`<circle cx="${x(pt.minute)}" cy="${y(pt.value)}" r="3" fill="${s.color}"/>`)
      const ly = p.top + 20 + i * 22
      parts.push(
        `<line x1="${x(minutes) + 16}" x2="${x(minutes) + 44}" y1="${ly}" y2="${ly}" stroke="${s.color}" ` +
          `stroke-width="2.5" stroke-dasharray="${s.dash}"/>`,
      )
      text(x(minutes) + 50, ly + 4, s.name, 'font-size="12" fill="#333"')
    }
  }
  // The shared minute axis, under the lower panel.
  const bottom = PANELS[1].top + PANELS[1].height
  for (const tick of axis(0, minutes, Math.min(minutes, 10)).ticks) {
    parts.push(`<line x1="${x(tick)}" x2="${x(tick)}" y1="${bottom}" y2="${bottom + 5}" stroke="#999"/>`)
    text(x(tick), bottom + 20, String(tick), 'font-size="12" text-anchor="middle" fill="#444"')
  }
  text(LEFT + plotWidth / 2, bottom + 44, 'minutes of load', 'font-size="13" text-anchor="middle" fill="#333"')
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" ` +
    `font-family="DejaVu Sans, sans-serif">${parts.join('')}</svg>`
  )
}

/** An axis from `lo` to `hi` widened to round ticks (1, 2 or 5 times a power of ten), about `count` of them. */
function axis(lo: number, hi: number, count = 5): { min: number; max: number; ticks: number[] } {
  const raw = (hi - lo) / count || 1
  const power = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 5, 10].map((f) => f * power).find((s) => s >= raw) ?? raw
  const min = Math.floor(lo / step) * step
  const max = Math.ceil(hi / step) * step
  const ticks: number[] = []
  for (let v = min; v <= max + step / 2; v += step) ticks.push(Number(v.toPrecision(12)))
  return { min, max, ticks }
}
