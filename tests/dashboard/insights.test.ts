// The Insights page in a real Chromium. Embedded: the counts of the events, runs and webhook
// requests just sent. Distributed: an api node on the real ClickHouse, where an example query of
// docs/clickhouse.md runs with one click and its result is a table and a chart. Both pages pass
// axe-core and are saved as screenshots at both sizes.
import t, { type Test } from 'tap'
import { readFile } from 'node:fs/promises'
import pino from 'pino'
import type { Browser } from 'playwright-core'
import { newUlid } from '../../core/ids.ts'
import { queryLimits } from '../../server/connections.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createClickHouseStores } from '../../store/clickhouse.ts'
import { sqlExamples } from '../../scripts/build-dashboard.ts'
import { launchChromium } from '../infra/chromium.ts'
import { eventually, getJson, postJson, ROOT, startServer, TEST_SIGNING_KEY } from '../helpers/server.ts'
import { finishedRuns } from '../functions/fixtures/rest.ts'
import { auth, distributedEnv, startNode } from '../distributed/cluster.ts'
import { ensureDashboardBuilt, errorsOf, openPage, screenshot, seriousViolations, SIZES } from './browser.ts'

await ensureDashboardBuilt()
const browser: Browser = await launchChromium()
t.teardown(() => browser.close())

async function checkPage(t: Test, page: Awaited<ReturnType<typeof openPage>>, name: string) {
  await page.waitForFunction(() => document.querySelectorAll('[aria-busy=true]').length === 0)
  t.same(await seriousViolations(page), [], 'axe-core: no serious or critical violation')
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  )
  t.ok(overflow <= 0, `no sideways scrolling of the page (overflow ${overflow} px)`)
  t.same(errorsOf(page), [], 'no script or console errors')
  await screenshot(page, name)
}

t.test('embedded: the Insights page shows the counts of the events, runs and webhook requests sent', async (t) => {
  const server = await startServer({ flags: { functionsFile: `${ROOT}tests/dashboard/fixtures/functions.ts` } })
  t.teardown(() => server.stop())
  const { body } = await postJson(`${server.url}/e/dev`, [
    ...Array.from({ length: 7 }, (_, i) => ({ name: 'insights/page.viewed', data: { i } })),
    ...Array.from({ length: 3 }, (_, i) => ({ name: 'insights/user.signed-up', data: { i } })),
    { name: 'shop/order.placed', data: { sku: 'A1', amount: 5 } },
  ])
  const { body: hook } = await postJson(`${server.url}/v1/webhooks`, {
    name: 'github',
    transform: 'function transform(evt) { return { name: "github/" + evt.action.toLowerCase(), data: evt } }',
  })
  await postJson(hook.data.url, { ref: 'main' })
  await finishedRuns(server.url, body.ids[10])
  await eventually(async () =>
    (await getJson(`${server.url}/v1/webhooks/${hook.data.id}/requests?status=failed`)).body.data.length === 1
      ? true
      : undefined,
  )
  for (const size of Object.keys(SIZES) as Array<keyof typeof SIZES>) {
    const page = await openPage(t, browser, `${server.url}/dashboard/#/insights`, size)
    await page.waitForSelector('#events-chart canvas')
    t.match(await page.textContent('#events-chart figcaption'), /Events per minute by name, the last hour: 12 events/)
    t.match(
      await page.textContent('#events-chart .chart-legend'),
      /insights\/page\.viewed.*insights\/user\.signed-up/s,
      'the names, most frequent first',
    )
    await page.waitForSelector('#run-outcomes')
    t.match(await page.textContent('#run-outcomes tbody'), /shop-checkout\s*0\s*1/, 'the failed run')
    t.match(await page.textContent('#webhook-failures'), /TRANSFORM_THREW.*github\s*1/s, 'the failed request, by code')
    t.equal(await page.locator('#sql').count(), 0, 'no SQL console without ClickHouse')
    t.match(await page.textContent('main'), /SQL over every stored event needs the distributed mode/)
    await page.selectOption('#insights-range', '24h')
    await page.waitForSelector('#events-chart figcaption >> text=per 5 minutes')
    await checkPage(t, page, `insights-embedded-${size}`)
  }
})

t.test('distributed: an example query over ClickHouse renders a table and a chart', async (t) => {
  const env = distributedEnv('dashboard_insights')
  const api = await startNode(['api'], env, [], 'start', { startTimeoutMs: 60_000 })
  t.teardown(() => api.kill())
  const stores = await createClickHouseStores(
    { url: env.SLUICE_CLICKHOUSE_URL!, database: env.SLUICE_CLICKHOUSE_DATABASE!, limits: queryLimits(DEFAULTS) },
    pino({ level: 'silent' }),
  )
  t.teardown(() => stores.close())
  const now = Date.now()
  const names = ['shop/order.placed', 'app/user.signed-up', 'github/push']
  await stores.events.insertEvents(
    Array.from({ length: 90 }, (_, i) => ({
      internalId: newUlid(now - i * 15 * 60_000),
      id: `e-${i}`,
      name: names[i % 3],
      data: { plan: i % 2 ? 'pro' : 'free', customer: { country: i % 3 ? 'FR' : 'JP' }, total: i },
      ts: now,
      env: 'production',
      receivedAt: now - i * 15 * 60_000,
      source: { kind: 'api' as const },
    })),
  )
  const examples = sqlExamples(await readFile(`${ROOT}docs/clickhouse.md`, 'utf8'))
  for (const size of Object.keys(SIZES) as Array<keyof typeof SIZES>) {
    const page = await openPage(t, browser, `${api.url}/dashboard/#/insights`, size)
    await page.fill('#signing-key', TEST_SIGNING_KEY)
    await page.dispatchEvent('#signing-key', 'change')
    await page.waitForSelector('#sql')
    t.same(
      await page.locator('fieldset.examples button').allTextContents(),
      examples.map((e) => e.title),
      'every example query of docs/clickhouse.md, one click away',
    )
    await page.click(`fieldset.examples button >> text=${examples[0].title}`)
    await page.waitForSelector('#sql-chart canvas')
    t.equal(await page.inputValue('#sql'), examples[0].sql, 'the example is in the editor')
    t.match(await page.textContent('#sql-summary'), /\d+ rows in \d+ ms/)
    t.same(
      await page.locator('#sql-rows thead th').allTextContents(),
      ['hour', 'name', 'events'],
      'the result as a table',
    )
    const legend = await page.locator('#sql-chart .chart-legend li').allTextContents()
    t.same([...legend].sort(), [...names].sort(), 'a line per name')
    t.equal(await page.getAttribute('#sql-chart button[aria-pressed=true]', 'aria-pressed'), 'true')
    t.match(await page.textContent('#sql-chart button[aria-pressed=true]'), /Line/, 'hours over time: a line chart')
    await page.click('#sql-chart button >> text=Bars')
    await page.waitForSelector('#sql-chart button[aria-pressed=true] >> text=Bars')
    // A categorical result charts as bars; a refusal is shown as the server's error.
    await page.fill('#sql', 'SELECT name, count() AS events FROM events FINAL GROUP BY name ORDER BY events DESC')
    await page.click('#run-sql')
    await page.waitForSelector('#sql-rows >> text=github/push')
    t.match(await page.textContent('#sql-chart button[aria-pressed=true]'), /Bars/)
    await checkPage(t, page, `insights-sql-${size}`)
    await page.fill('#sql', 'DROP TABLE events')
    await page.press('#sql', 'Control+Enter')
    await page.waitForSelector('#sql-result [role=alert]')
    t.match(await page.textContent('#sql-result [role=alert]'), /^REQUEST_INVALID: body\.sql: only a read query/)
  }
  const { body } = await postJson(`${api.url}/v1/insights/query`, { sql: 'SELECT count() FROM events' }, auth)
  t.equal(Number(body.data.rows[0][0]), 90, 'nothing was dropped')
})
