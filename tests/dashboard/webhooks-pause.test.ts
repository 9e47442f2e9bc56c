// The webhook page's Pause / Resume control in a real Chromium against a real Dev Server: pausing
// shows the held count as requests arrive; resuming delivers them and the page says so.
import t from 'tap'
import type { Browser } from 'playwright-core'
import { launchChromium } from '../infra/chromium.ts'
import { startServer, getJson, postJson, eventually } from '../helpers/server.ts'
import { ensureDashboardBuilt, errorsOf, openPage } from './browser.ts'

await ensureDashboardBuilt()
const server = await startServer()
t.teardown(() => server.stop())
const browser: Browser = await launchChromium()
t.teardown(() => browser.close())

t.test('Pause holds requests and shows how many; Resume delivers them', async (t) => {
  const { body } = await postJson(`${server.url}/v1/webhooks`, { name: 'paused-shop' })
  const hook = body.data
  const page = await openPage(t, browser, `${server.url}/dashboard/#/webhooks/${hook.id}`)
  await page.waitForSelector('.webhook-pause[data-paused="false"]')
  await page.click('.webhook-pause button.pause')
  await page.waitForSelector('.webhook-pause[data-paused="true"]')
  t.match(await page.textContent('.webhook-pause'), /paused/)
  t.equal((await getJson(`${server.url}/v1/webhooks/${hook.id}`)).body.data.paused, true, 'the click paused it')

  for (let n = 0; n < 3; n++) t.equal((await postJson(hook.url, { n })).status, 200)
  await eventually(async () =>
    (await getJson(`${server.url}/v1/webhooks/${hook.id}`)).body.data.held === 3 ? 1 : undefined,
  )
  await page.reload()
  await page.waitForSelector('#webhook-held')
  t.equal(await page.textContent('#webhook-held'), '3 requests held')

  await page.click('.webhook-pause button.resume')
  await page.waitForSelector('.webhook-pause[data-paused="false"]')
  const delivered = await eventually(async () => {
    const r = await getJson(`${server.url}/v1/webhooks/${hook.id}/requests?status=delivered`)
    return r.body.data.length === 3 ? r.body.data : undefined
  })
  t.equal(delivered.length, 3, 'the held requests are delivered after Resume')
  t.same(errorsOf(page), [])
})
