// bench/dashboard: time to first render of the Events page (navigation start → the first row of
// events on screen, in Chromium) with 100,000 stored events, and the dashboard's bundle size (raw
// and gzip; what the Events page loads, and the CodeMirror chunk only the webhook page loads).
// One `sluice dev` process on loopback. Target: first render under 1 s.
// Usage: node --conditions=sluice-source bench/dashboard/run.ts [events] [page loads]
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { launchChromium } from '../../tests/infra/chromium.ts'
import { buildDashboard, DASHBOARD_OUT } from '../../scripts/build-dashboard.ts'
import { report, startChild } from '../lib.ts'

const events = Number(process.argv[2] ?? 100_000)
const loads = Number(process.argv[3] ?? 7)
const BATCH = 1_000
const NAMES = ['app/user.signed-up', 'shop/order.placed', 'stripe/invoice.paid', 'github/push', 'app/page.viewed']

await buildDashboard()
const files = (await readdir(DASHBOARD_OUT)).filter((f) => /\.(js|css|html)$/.test(f))
// What app.js imports dynamically (the CodeMirror editor) loads only on the webhook page.
const lazy = new Set(
  [...(await readFile(join(DASHBOARD_OUT, 'app.js'), 'utf8')).matchAll(/import\("\.\/(chunk-[\w-]+\.js)"\)/g)].map(
    (m) => m[1],
  ),
)
const size = async (names: string[]) => {
  const bodies = await Promise.all(names.map((f) => readFile(join(DASHBOARD_OUT, f))))
  return {
    raw: bodies.reduce((n, b) => n + b.length, 0),
    gzip: bodies.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0),
  }
}

const loadBefore = loadavg()[0]
const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-dashboard-'))
const sluice = await startChild(['bin/sluice.js', 'dev', '--port', '0', '--data-dir', join(dataDir, 'data')], {
  SLUICE_LOG_LEVEL: 'info',
})
const browser = await launchChromium()
try {
  let last = ''
  for (let sent = 0; sent < events; sent += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, events - sent) }, (_, i) => ({
      name: NAMES[(sent + i) % NAMES.length],
      data: { n: sent + i, user: { id: `u-${(sent + i) % 997}`, plan: 'pro' }, tags: ['a', 'b'] },
    }))
    const response = await fetch(`${sluice.url}/e/bench`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(batch),
    })
    const body = (await response.json()) as { ids: string[] }
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${JSON.stringify(body)}`)
    last = body.ids[body.ids.length - 1]
  }
  // Stored (not only accepted): the page reads the store.
  while ((await fetch(`${sluice.url}/v1/events/${last}`)).status !== 200) await new Promise((r) => setTimeout(r, 200))

  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  const firstRenderMs: number[] = []
  for (let i = 0; i < loads + 1; i++) {
    await page.goto('about:blank')
    await page.goto(`${sluice.url}/dashboard/#/events`)
    await page.waitForSelector('#events tbody tr')
    const ms = await page.evaluate(() => performance.now())
    if (i > 0) firstRenderMs.push(ms) // the first load warms the server's and the browser's caches
  }
  const apiStart = performance.now()
  await fetch(`${sluice.url}/v1/events?limit=100`).then((r) => r.json())
  const apiMs = performance.now() - apiStart
  firstRenderMs.sort((a, b) => a - b)
  const initial = await size(files.filter((f) => !lazy.has(f)))
  const editor = await size([...lazy])
  report(
    'dashboard',
    [
      {
        measure: 'events page first render p50 (ms)',
        value: Math.round(firstRenderMs[Math.floor(firstRenderMs.length / 2)]),
      },
      { measure: 'events page first render max (ms)', value: Math.round(firstRenderMs[firstRenderMs.length - 1]) },
      { measure: 'GET /v1/events?limit=100 (ms)', value: Math.round(apiMs) },
      { measure: 'events page bundle raw (KiB)', value: (initial.raw / 1024).toFixed(1) },
      { measure: 'events page bundle gzip (KiB)', value: (initial.gzip / 1024).toFixed(1) },
      { measure: 'editor chunk raw (KiB)', value: (editor.raw / 1024).toFixed(1) },
      { measure: 'editor chunk gzip (KiB)', value: (editor.gzip / 1024).toFixed(1) },
    ],
    { storedEvents: events, pageLoads: loads, loadAverage1m: loadBefore, targetFirstRenderMs: 1000 },
  )
} finally {
  await browser.close()
  await sluice.stop()
  await rm(dataDir, { recursive: true, force: true })
}
