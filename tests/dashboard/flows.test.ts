// What a user does in the dashboard from end to end, in a real Chromium against real servers:
// watch events arrive live, build a webhook and follow its event to a second Dev Server, and
// retry a run that failed on its second step.
import t, { type Test } from 'tap'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from '../infra/chromium.ts'
import { eventually, getJson, postJson, ROOT, startServer } from '../helpers/server.ts'
import { ensureDashboardBuilt, errorsOf, openPage, setEditor } from './browser.ts'

await ensureDashboardBuilt()
const server = await startServer({ flags: { functionsFile: `${ROOT}tests/dashboard/fixtures/functions.ts` } })
t.teardown(() => server.stop())
const browser: Browser = await launchChromium()
t.teardown(() => browser.close())

const open = (t: Test, path: string): Promise<Page> => openPage(t, browser, `${server.url}/dashboard/#${path}`)

t.test('an event sent while the Events page is open appears without a reload; Pause holds new ones back', async (t) => {
  const page = await open(t, '/events')
  await page.waitForSelector('#live-status >> text=Live')
  const [id] = (await postJson(`${server.url}/e/dev`, { name: 'live/first', data: { n: 1 } })).body.ids
  await page.waitForSelector(`#events tr[data-id="${id}"]`)
  t.equal(await page.locator('#events tbody tr').first().getAttribute('data-id'), id, 'newest first')
  await page.click('#pause')
  t.equal(await page.textContent('#live-status'), 'Paused')
  const [held] = (await postJson(`${server.url}/e/dev`, { name: 'live/held', data: {} })).body.ids
  await eventually(async () => ((await getJson(`${server.url}/v1/events/${held}`)).status === 200 ? true : undefined))
  await page.waitForTimeout(1_500) // longer than a poll of the stream
  t.equal(await page.locator(`#events tr[data-id="${held}"]`).count(), 0, 'not shown while paused')
  await page.click('#pause')
  await page.waitForSelector(`#events tr[data-id="${held}"]`)
  t.pass('shown on resume, without a reload')
  t.same(errorsOf(page), [], 'no script or console errors')
})

t.test(
  'a webhook from transform to a second Dev Server: syntax error inline, fixed, previewed, delivered, opened, sent on',
  async (t) => {
    const devServer = await startServer()
    t.teardown(() => devServer.stop())
    const page = await open(t, '/webhooks')
    await page.fill('#create-webhook input[name=name]', 'github')
    await page.click('#create-webhook button')
    await page.waitForSelector('#edit-webhook')

    await setEditor(
      page,
      '#transform',
      'function transform(evt, headers) {\n  return { name: "github/" + headers["X-Github-Event"], data: evt\n}',
    )
    await page.waitForSelector('#transform .cm-lint-marker-error')
    t.pass('the syntax error is marked in the editor at once')
    await page.waitForSelector('#preview-result >> text=TRANSFORM_COMPILE')
    await page.hover('#transform .cm-lint-marker-error')
    await page.waitForSelector('.cm-tooltip-lint >> text=TRANSFORM_COMPILE')
    t.pass("the server's compile error is shown on its line")

    await setEditor(
      page,
      '#transform',
      'function transform(evt, headers) {\n  return { name: "github/" + headers["X-Github-Event"], data: evt, id: evt.delivery }\n}',
    )
    await setEditor(page, '#preview-headers', '{"x-github-event": "push"}')
    await setEditor(
      page,
      '#preview-payload',
      '{"delivery": "d-42", "ref": "refs/heads/main", "commits": [{"id": "abc"}]}',
    )
    // The headers alone already preview as github/push (with the sample payload's id): wait for the
    // preview of the pasted payload, which the debounce may deliver a moment later.
    await page.waitForSelector('#preview-result >> text=d-42')
    t.equal(await page.locator('#transform .cm-lint-marker-error').count(), 0, 'no error left in the editor')
    t.match(await page.textContent('#preview-result'), /"name".*"github\/push".*"id".*"d-42"/s)
    await page.click('#save-webhook')
    await page.waitForSelector('#save-status .ok')

    const url = await page.textContent('#webhook-url')
    const delivered = await postJson(url!, { delivery: 'd-42', ref: 'refs/heads/main' }, { 'x-github-event': 'push' })
    t.equal(delivered.status, 200)
    await page.click('#deliveries-title ~ button >> text=Refresh')
    const eventLink = page.locator('#deliveries .event-link').first()
    await eventually(async () => {
      await page.click('#deliveries-title ~ button >> text=Refresh')
      return (await eventLink.count()) > 0 ? true : undefined
    })
    t.match(await page.textContent('#deliveries'), /accepted/)

    await page.goto(`${server.url}/dashboard/#/events`)
    const row = page.locator('#events tr:has-text("github/push")')
    await row.waitFor()
    await row.click()
    await page.waitForSelector('#event-detail')
    t.equal(await page.textContent('#event-detail h1'), 'github/push')
    t.match(await page.textContent('#event-detail .meta'), /Dedup id\s*d-42.*Source\s*webhook/s)

    await page.fill('#send-to-dev input[name=url]', devServer.url)
    await page.click('#send-to-dev button')
    await page.waitForSelector('#send-to-dev-result .ok')
    const arrived = await eventually(async () => (await getJson(`${devServer.url}/v1/events?id=d-42`)).body.data[0])
    t.match(
      arrived,
      { name: 'github/push', id: 'd-42', data: { delivery: 'd-42', ref: 'refs/heads/main' }, source: { kind: 'api' } },
      'it arrived at the second Dev Server',
    )
    await page.reload()
    await page.waitForSelector('#event-detail')
    t.equal(await page.inputValue('#send-to-dev input[name=url]'), devServer.url, 'the Dev Server URL is remembered')
    t.same(errorsOf(page), [], 'no script or console errors')
  },
)

t.test(
  'a run that failed on its second step shows the step timeline with the error, and retries from the dashboard',
  async (t) => {
    const [eventId] = (
      await postJson(`${server.url}/e/dev`, { name: 'shop/order.placed', data: { sku: 'C3', amount: 99 } })
    ).body.ids
    const page = await open(t, '/runs?status=failed')
    const row = page.locator('#runs tr:has-text("shop-checkout")').first()
    await eventually(async () => {
      await page.reload()
      await page.waitForSelector('#run-filters')
      return (await row.count()) > 0 ? true : undefined
    })
    await row.click()
    await page.waitForSelector('#timeline')
    t.same(
      await page.locator('#timeline .step').evaluateAll((steps) => steps.map((s) => s.getAttribute('data-step'))),
      ['reserve-stock', 'charge-card'],
    )
    t.match(
      await page.textContent('#timeline .step.completed'),
      /reserve-stock.*completed.*1 attempt.*"reserved".*true/s,
    )
    t.match(
      await page.textContent('#timeline .step.failed'),
      /charge-card.*failed.*NonRetriableError.*card declined by the issuer/s,
    )
    t.match(await page.textContent('#run-final-error'), /card declined by the issuer/)
    t.match(await page.textContent('#run-detail .meta'), new RegExp(`Event\\s*shop/order.placed\\s*${eventId}`))

    await page.click('#retry-run')
    await page.waitForSelector('#run-detail h1 >> text=completed')
    t.notOk(await page.locator('#retry-run').count(), 'no retry button on a completed run')
    t.match(await page.textContent('#timeline .step[data-step="charge-card"]'), /completed.*"charged".*99/s)
    t.match(await page.textContent('#run-detail'), /Result.*"charged"/s)
    t.same(errorsOf(page), [], 'no script or console errors')
  },
)
