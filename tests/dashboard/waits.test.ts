// Functions that wait, as the dashboard shows them, in a real Chromium against a real server serving
// tests/functions/fixtures/waits.ts: what a run waits for and until when, cancelling it from its page,
// the runs list filtered by waiting and cancelled, how a wait ended, invocations, cron and cancelOn.
import t, { type Test } from 'tap'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from '../infra/chromium.ts'
import { eventually, getJson, postJson, ROOT, startServer, tempDir } from '../helpers/server.ts'
import { sendEvent } from '../functions/fixtures/rest.ts'
import { ensureDashboardBuilt, errorsOf, focusOn, openPage, SIZES, screenshot } from './browser.ts'
import { hasEnded, isWaiting, runWhen, waitingOrder } from './runs.ts'

await ensureDashboardBuilt()
const server = await startServer({ flags: { functionsFile: `${ROOT}tests/dashboard/fixtures/functions.ts` } })
t.teardown(() => server.stop())
const browser: Browser = await launchChromium()
t.teardown(() => browser.close())

const open = (t: Test, path: string): Promise<Page> => openPage(t, browser, `${server.url}/dashboard/#${path}`)
const text = async (page: Page, selector: string) => (await page.textContent(selector))?.replace(/\s+/g, ' ') ?? ''
const unique = () => `order-${Math.random().toString(36).slice(2, 10)}`
const step = (id: string) => `#timeline .step[data-step="${id}"]`

/** Once the runs list shows `runId` and only runs of `status` (the previous list stays up while one loads). */
const listedAs = (page: Page, status: string, runId: string) =>
  page.waitForFunction(
    ([status, runId]) =>
      document.querySelector(`#runs tr[data-id="${runId}"]`) !== null &&
      [...document.querySelectorAll('#runs tbody .badge')].every((badge) => badge.textContent === status),
    [status, runId],
  )

t.test(
  'a waiting run says what it waits for and until when; cancelled from its page, it shows the cause',
  async (t) => {
    const run = await waitingOrder(server.url, unique())
    const page = await open(t, `/runs/${run.run_id}`)
    await page.waitForSelector('#run-state')
    t.match(
      await text(page, '#run-state'),
      /^Waiting for test\/paid where data\.order matches, until .+ \(in (59|60) min\)\.$/,
      'the header: the awaited event, its match and the timeout',
    )
    t.match(
      await text(page, step('paid')),
      /^paid\s*waiting\s*started .+ so far · 1 attempt\s*Waiting for test\/paid/,
      'the waiting step',
    )

    await page.click('#cancel-run')
    t.match(
      await text(page, '#confirm-cancel'),
      /Cancel this run\?\s*A step already running finishes first; nothing after it runs\./,
      'asks first, saying what happens to the step in flight',
    )
    t.ok(await focusOn(page, '#confirm-cancel-run'), 'focus is on the answer')
    // For a person to look at (tests/dashboard/screenshots/), at both sizes.
    await screenshot(page, 'run-cancel-confirm-desktop')
    await page.setViewportSize(SIZES.phone)
    await screenshot(page, 'run-cancel-confirm-phone')
    await page.setViewportSize(SIZES.desktop)
    await page.click('#confirm-cancel >> text=No, keep it')
    t.equal(await page.locator('#confirm-cancel').count(), 0, '"No" closes the question')
    t.ok(await focusOn(page, '#cancel-run'), 'and focus returns to the button')
    t.equal((await getJson(`${server.url}/v1/runs/${run.run_id}`)).body.data.status, 'waiting', 'nothing was asked')

    await page.click('#cancel-run')
    await page.click('#confirm-cancel-run')
    await page.waitForSelector('#run-detail .ok')
    t.match(await text(page, '#run-detail .ok'), /Cancel requested\. A step already running finishes first/)
    await page.waitForSelector('#run-detail h1 >> text=cancelled')
    t.match(await text(page, '#run-state'), /^Cancelled from the API or the dashboard at .+\.$/, 'the cause')
    t.match(
      await text(page, step('paid')),
      /Was waiting for test\/paid where data\.order matches \(until .+\) when the run was cancelled\./,
      'the step says what it was waiting for',
    )
    t.equal(await page.locator('#cancel-run').count(), 0, 'no Cancel button on an ended run')
    t.same((await getJson(`${server.url}/v1/runs/${run.run_id}`)).body.data.cancelled_by, { kind: 'api' })
    t.same(errorsOf(page), [], 'no script or console errors')
  },
)

t.test('a run cancelled by an event links that event', async (t) => {
  const order = unique()
  const run = await waitingOrder(server.url, order)
  const refund = await sendEvent(server.url, { name: 'test/refunded', data: { order } })
  await runWhen(server.url, run.event_id, 'waits-orders', hasEnded)
  const page = await open(t, `/runs/${run.run_id}`)
  await page.waitForSelector('#run-state')
  t.match(await text(page, '#run-state'), new RegExp(`^Cancelled by event test/refunded ${refund} at .+\\.$`))
  t.equal(await page.getAttribute('#run-state a', 'href'), `#/events/${refund}`)
  t.same(errorsOf(page), [], 'no script or console errors')
})

t.test('the runs list filters by waiting and by cancelled; a waiting row says what it waits for', async (t) => {
  const sleepId = await sendEvent(server.url, { name: 'test/sleep', data: { sleep: '10m' } })
  const sleeper = await runWhen(server.url, sleepId, 'waits-sleeper', isWaiting)
  const order = await waitingOrder(server.url, unique())
  const page = await open(t, '/runs')
  await page.waitForSelector('#run-filters')
  t.same(
    await page.locator('#run-filters select[name=status] option').evaluateAll((os) => os.map((o) => o.textContent)),
    ['Any', 'queued', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'skipped'],
  )
  await page.selectOption('#run-filters select[name=status]', 'waiting')
  await page.click('#run-filters button[type=submit]')
  await listedAs(page, 'waiting', sleeper.run_id)
  t.match(page.url(), /#\/runs\?status=waiting/)
  t.match(await text(page, `#runs tr[data-id="${sleeper.run_id}"]`), /waiting\s*sleeping, wakes in (9|10) min/)
  t.match(await text(page, `#runs tr[data-id="${order.run_id}"]`), /waiting\s*for test\/paid/)

  t.equal((await postJson(`${server.url}/v1/runs/${sleeper.run_id}/cancel`, {})).status, 202)
  await runWhen(server.url, sleepId, 'waits-sleeper', hasEnded)
  await page.selectOption('#run-filters select[name=status]', 'cancelled')
  await page.click('#run-filters button[type=submit]')
  await listedAs(page, 'cancelled', sleeper.run_id)
  t.equal(await page.locator(`#runs tr[data-id="${order.run_id}"]`).count(), 0, 'the waiting one is not listed')
  t.same(errorsOf(page), [], 'no script or console errors')
})

t.test('a wait that matched links the event that resumed it; a wait that timed out says when', async (t) => {
  const order = unique()
  const run = await waitingOrder(server.url, order)
  const paid = await sendEvent(server.url, { name: 'test/paid', data: { order, amount: 7 } })
  await runWhen(server.url, run.event_id, 'waits-orders', hasEnded)
  const page = await open(t, `/runs/${run.run_id}`)
  await page.waitForSelector('#timeline')
  t.match(
    await text(page, `${step('paid')} .pause-text`),
    new RegExp(`^Waited for test/paid where data\\.order matches, until .+ — matched by ${paid}\\.$`),
  )
  t.equal(await page.locator('#run-state').count(), 0, 'a completed run has no wait or cause to tell')
  await page.click(`${step('paid')} .pause-text a`)
  await page.waitForSelector('#event-detail')
  t.equal(await page.textContent('#event-internal-id'), paid, 'the link opens the matching event')

  const late = await waitingOrder(server.url, unique(), '1s')
  await runWhen(server.url, late.event_id, 'waits-orders', hasEnded)
  await page.goto(`${server.url}/dashboard/#/runs/${late.run_id}`)
  await page.waitForSelector('#timeline')
  t.match(
    await text(page, `${step('paid')} .pause-text`),
    /^Waited for test\/paid where data\.order matches — timed out at .+\.$/,
  )
  t.same(errorsOf(page), [], 'no script or console errors')
})

t.test('a sleeping run says until when; an invocation links the invoked run, whose event links back', async (t) => {
  const sleepId = await sendEvent(server.url, { name: 'test/sleep', data: { sleep: '3m' } })
  const sleeper = await runWhen(server.url, sleepId, 'waits-sleeper', isWaiting)
  const page = await open(t, `/runs/${sleeper.run_id}`)
  await page.waitForSelector('#run-state')
  t.match(await text(page, '#run-state'), /^Sleeping until .+ \(in 3 min\)\.$/)
  t.match(await text(page, step('before')), /^before\s*completed/)
  t.match(await text(page, `${step('nap')} .pause-text`), /^Sleeping until .+ \(in 3 min\)\.$/)
  await postJson(`${server.url}/v1/runs/${sleeper.run_id}/cancel`, {})

  const callId = await sendEvent(server.url, { name: 'test/call', data: { n: 4 } })
  const caller = await runWhen(server.url, callId, 'waits-caller', hasEnded)
  const invoked = caller.steps[0].pause.run_id
  await page.goto(`${server.url}/dashboard/#/runs/${caller.run_id}`)
  await page.waitForSelector('#timeline')
  t.match(await text(page, `${step('call')} .pause-text`), new RegExp(`^Invoked waits-double — run ${invoked}\\.$`))
  await page.click(`${step('call')} .pause-text a`)
  await page.waitForSelector('#run-detail h1 >> text=waits-double')
  t.match(await text(page, '[aria-label="Function output"]'), /8/, "the invoked run's page, with its result")
  await page.click('#run-detail .meta a')
  await page.waitForSelector('#event-detail')
  t.match(
    await text(page, '#event-detail .meta'),
    new RegExp(`Source\\s*invoked by function waits-caller, run ${caller.run_id} \\(step call\\), to run waits-double`),
  )
  t.equal(
    await page.getAttribute(`#event-detail .meta a[href="#/runs/${caller.run_id}"]`, 'href'),
    `#/runs/${caller.run_id}`,
  )
  t.same(errorsOf(page), [], 'no script or console errors')
})

t.test(
  'the Functions page shows triggers with their filters, cron schedules and the events that cancel runs',
  async (t) => {
    const page = await open(t, '/functions')
    await page.waitForSelector('#functions')
    const row = (id: string) => text(page, `#functions tr:has-text("${id}")`)
    t.match(await row('reports-weekly-digest'), /cron 0 9 \* \* 1 \(Europe\/Paris\)/, 'a cron schedule and its zone')
    t.match(await row('waits-vip'), /shop\/\* if event\.data\.vip == true\s*test\/vip/, 'a pattern with its filter')
    t.match(
      await row('waits-orders'),
      /test\/ordered\s*none\s*test\/refunded where data\.order matches/,
      'cancelOn, matched',
    )
    t.match(await row('waits-flaky'), /test\/stop if async\.data\.job == event\.data\.job/, 'cancelOn, by expression')
    t.match(await row('shop-checkout'), /shop\/order\.placed\s*none\s*no event/, 'no flow control, no cancelOn')
    t.equal(
      await page.getAttribute('#functions tr:has-text("waits-orders") a:has-text("test/refunded")', 'href'),
      '#/events?name=test%2Frefunded',
      'event names link to their events',
    )
    t.same(errorsOf(page), [], 'no script or console errors')
  },
)

t.test("a cron tick's event names its function and schedule", async (t) => {
  process.env.SLUICE_TEST_STEP_LOG = `${await tempDir()}/ticks.log`
  const cron = await startServer({ flags: { functionsFile: `${ROOT}tests/functions/fixtures/cron.ts` } })
  t.teardown(() => cron.stop())
  const tick = await eventually(async () => {
    const { body } = await getJson(`${cron.url}/v1/events?limit=10`)
    return body.data.find((e: any) => e.source.kind === 'cron')
  }, 15_000)
  const page = await openPage(t, browser, `${cron.url}/dashboard/#/events/${tick.internal_id}`)
  await page.waitForSelector('#event-detail')
  t.match(await text(page, '#event-detail .meta'), /Source\s*cron \*\/2 \* \* \* \* \* of function cron-tick/)
  t.equal(await page.getAttribute('#event-detail .meta a:has-text("cron-tick")', 'href'), '#/runs?function=cron-tick')
  t.same(errorsOf(page), [], 'no script or console errors')
})
