// The Apps page in a real Chromium: an app written with the real npm inngest 4.x is synced by its URL
// from the page, then shows its SDK, framework and functions with their triggers; removing it empties
// the page and the function registry.
import t from 'tap'
import { launchChromium } from '../infra/chromium.ts'
import { getJson, startServer } from '../helpers/server.ts'
import { startJsApp } from '../sdk/js-app.ts'
import { ensureDashboardBuilt, errorsOf, openPage } from './browser.ts'

t.test('sync an app from the Apps page, see its functions, remove it', async (t) => {
  await ensureDashboardBuilt()
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const server = await startServer()
  t.teardown(() => server.stop())
  const app = await startJsApp({ major: 'v4', appId: 'page-app', baseUrl: server.url })
  t.teardown(() => app.close())
  const page = await openPage(t, browser, `${server.url}/dashboard/#/apps`, 'desktop')
  await page.waitForSelector('.empty')
  await page.fill('#sync-app input[name=url]', app.url)
  await page.click('#sync-app button[type=submit]')
  await page.waitForSelector('#synced')
  const row = await page.textContent('#apps')
  t.match(row, /page-app/)
  t.match(row, /js 4\.24\.0/, 'the SDK and its version')
  t.match(row, /page-app-wait\s*sdk\/order/, 'a function with its trigger')
  t.match(row, /page-app-fail-failure\s*sluice\/function\.failed if/, "onFailure's function, on Sluice's name")
  await page.click('#apps button:has-text("Remove")')
  await page.waitForSelector('.empty')
  t.same((await getJson(`${server.url}/v1/functions`)).body.data, [], 'its functions are gone')
  t.same(errorsOf(page), [], 'no script or console errors')
})
