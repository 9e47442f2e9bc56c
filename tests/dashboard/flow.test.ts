// Flow control as the dashboard shows it, in a real Chromium against a real server serving
// tests/functions/fixtures/flow.ts: each function's flow control; pausing a function from its page and
// resuming it (the held runs run, or are skipped); a bulk cancel and a bulk replay from the runs page (the
// dry run's count, then the job's progress until done); why a run was skipped; a batch run's events; the
// run that replaced a singleton.
import t, { type Test } from 'tap'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from '../infra/chromium.ts'
import { eventually, getJson, postJson, ROOT, startServer } from '../helpers/server.ts'
import { ensureDashboardBuilt, errorsOf, focusOn, openPage, SIZES, screenshot, seriousViolations } from './browser.ts'
import { hasEnded, isWaiting, runWhen } from './runs.ts'

await ensureDashboardBuilt()
const server = await startServer({ flags: { functionsFile: `${ROOT}tests/functions/fixtures/flow.ts` } })
t.teardown(() => server.stop())
const browser: Browser = await launchChromium()
t.teardown(() => browser.close())

const open = (t: Test, path: string): Promise<Page> => openPage(t, browser, `${server.url}/dashboard/#${path}`)
/** What a reader sees: the rendered text (blocks apart, as innerText has them), spaces collapsed. */
const text = async (page: Page, selector: string) => (await page.innerText(selector)).replace(/\s+/g, ' ').trim()
const unique = () => Math.random().toString(36).slice(2, 10)
const fnRow = (id: string) => `#functions tr[data-id="${id}"]`
const runRow = (id: string) => `#runs tr[data-id="${id}"]`

/** Sends events in one request; their internal IDs in order. */
async function send(name: string, data: Array<Record<string, unknown>>): Promise<string[]> {
  const { status, body } = await postJson(
    `${server.url}/e/dev`,
    data.map((d) => ({ name, data: d })),
  )
  if (status !== 200) throw new Error(`send failed: ${JSON.stringify(body)}`)
  return body.ids
}

/** Once the run page shows the run as `status` (it refreshes itself while the run has not ended). */
const runPageSays = (page: Page, status: string) => page.waitForSelector(`#run-detail h1 .badge >> text=${status}`)

t.test('the Functions page sums up each function’s flow control, one option a line', async (t) => {
  const page = await open(t, '/functions')
  await page.waitForSelector('#functions')
  const lines = async (id: string) => {
    const shown = await page.locator(`${fnRow(id)} td.flow .flow-line`).allTextContents()
    const all = shown.length > 0 ? shown : [await page.locator(`${fnRow(id)} td.flow`).textContent()]
    return all.map((l) => l?.replace(/\s+/g, ' ').trim())
  }
  t.same(await lines('flow-per-customer'), ['1 at a time per event.data.customer'])
  t.same(await lines('flow-throttled'), ['throttle 2 / 2 s'])
  t.same(await lines('flow-limited'), ['rate 3 / min per event.data.user (more start no run)'])
  t.same(await lines('flow-debounced'), ['debounce 1 s per event.data.k (at most 4 s)'])
  t.same(await lines('flow-batched'), ['batches of 3 within 1 s'])
  t.same(await lines('flow-prioritized'), ['1 at a time', 'priority event.data.vip == true ? 600 : 0'])
  t.same(await lines('flow-idempotent'), ['once a day per event.data.order'])
  t.same(await lines('flow-only-one'), ['one at a time per event.data.account: a new run is skipped'])
  t.same(await lines('flow-latest-wins'), ['one at a time per event.data.account: a new run cancels the running one'])
  t.same(await lines('flow-plain'), ['none'])
  t.same(errorsOf(page), [], 'no script or console errors')
})

t.test('paused from its page, a function holds new runs; resumed, they run; resumed with skip, they end', async (t) => {
  const page = await open(t, '/functions')
  await page.waitForSelector(fnRow('flow-plain'))
  t.equal(await text(page, `${fnRow('flow-plain')} .pause-control`), 'active Pause flow-plain')
  await page.click(`${fnRow('flow-plain')} button.pause`)
  await page.waitForSelector(`${fnRow('flow-plain')} .badge >> text=paused`)
  t.match(await text(page, `${fnRow('flow-plain')} .pause-control`), /^paused \d+ s ago; new runs are held Resume…/)
  const listed = (await getJson(`${server.url}/v1/functions`)).body.data.find((f: any) => f.id === 'flow-plain')
  t.match(listed, { paused: true, paused_at: String }, 'paused over REST')

  const tag = unique()
  const held = await send('flow/plain', [{ n: `${tag}-1` }, { n: `${tag}-2` }])
  const heldRuns = await Promise.all(held.map((id) => runWhen(server.url, id, 'flow-plain', () => true)))
  await page.waitForTimeout(1_500) // long enough for a run that was not held to have run
  const runs = await open(t, '/runs?function=flow-plain')
  for (const run of heldRuns) await runs.waitForSelector(runRow(run.run_id))
  for (const run of heldRuns) t.match(await text(runs, runRow(run.run_id)), /^queued/, 'held: queued, not run')

  await page.click(`${fnRow('flow-plain')} button.resume`)
  t.match(
    await text(page, `${fnRow('flow-plain')} .confirm-resume`),
    /^Resume flow-plain\? The runs that arrived while it was paused are held, in order of arrival\./,
    'asks what to do with the held runs',
  )
  t.ok(await focusOn(page, `${fnRow('flow-plain')} button.run-held`), 'focus is on the first answer')
  t.same(await seriousViolations(page), [], 'axe-core: the question has no serious violation')
  await screenshot(page, 'function-resume-desktop')
  await page.setViewportSize(SIZES.phone)
  await screenshot(page, 'function-resume-phone')
  await page.setViewportSize(SIZES.desktop)
  await page.click(`${fnRow('flow-plain')} .confirm-resume button.secondary`)
  t.equal(await page.locator('.confirm-resume').count(), 0, '"Keep it paused" closes the question')
  t.ok(await focusOn(page, `${fnRow('flow-plain')} button.resume`), 'and focus returns to the button')

  await page.click(`${fnRow('flow-plain')} button.resume`)
  await page.click(`${fnRow('flow-plain')} button.run-held`)
  await page.waitForSelector(`${fnRow('flow-plain')} button.pause`)
  t.equal(await text(page, `${fnRow('flow-plain')} .pause-control`), 'active Pause flow-plain', 'active again')
  await runs.goto(`${server.url}/dashboard/#/runs/${heldRuns[1].run_id}`)
  await runPageSays(runs, 'completed')
  t.match(await text(runs, '[aria-label="Function output"]'), new RegExp(`${tag}-2`), 'the held run ran')

  await page.click(`${fnRow('flow-plain')} button.pause`)
  await page.waitForSelector(`${fnRow('flow-plain')} button.resume`)
  const [skippedId] = await send('flow/plain', [{ n: `${tag}-3` }])
  const skipped = await runWhen(server.url, skippedId, 'flow-plain', () => true)
  await page.click(`${fnRow('flow-plain')} button.resume`)
  await page.click(`${fnRow('flow-plain')} button.skip-held`)
  await page.waitForSelector(`${fnRow('flow-plain')} button.pause`)
  await runs.goto(`${server.url}/dashboard/#/runs/${skipped.run_id}`)
  await runPageSays(runs, 'skipped')
  t.equal(
    await text(runs, '#run-state'),
    'Skipped (PAUSED): held while the function was paused, then skipped on resume.',
    'the run says why it did not run',
  )
  t.same([...errorsOf(page), ...errorsOf(runs)], [], 'no script or console errors')
})

t.test('bulk cancel from the runs page: the dry run counts, then the job cancels them, with progress', async (t) => {
  const tag = unique()
  const ids = await send(
    'flow/plain',
    [1, 2, 3].map((n) => ({ n: `${tag}-${n}`, sleep: '1h' })),
  )
  const waiting = await Promise.all(ids.map((id) => runWhen(server.url, id, 'flow-plain', isWaiting)))
  const page = await open(t, '/runs?function=flow-plain&status=waiting')
  for (const run of waiting) await page.waitForSelector(runRow(run.run_id))
  t.equal(
    await text(page, '#bulk > p'),
    'On the runs the filters above match: function flow-plain, status waiting, in every environment.',
  )

  await page.click('#bulk-cancel')
  await page.waitForSelector('#bulk-count >> text=This will')
  t.equal(await text(page, '#bulk-count'), 'This will cancel 3 runs.', 'the dry run counts them')
  t.ok(await focusOn(page, '#confirm-bulk'), 'focus is on the question')
  for (const run of waiting)
    t.equal((await getJson(`${server.url}/v1/runs/${run.run_id}`)).body.data.status, 'waiting', 'nothing changed')
  t.same(await seriousViolations(page), [], 'axe-core: the question has no serious violation')
  await screenshot(page, 'runs-bulk-confirm-desktop')
  await page.setViewportSize(SIZES.phone)
  await screenshot(page, 'runs-bulk-confirm-phone')
  await page.setViewportSize(SIZES.desktop)
  await page.click('#confirm-bulk >> text=No, leave them')
  t.ok(await focusOn(page, '#bulk-cancel'), '"No" returns focus to the button')

  await page.click('#bulk-cancel')
  await page.waitForSelector('#confirm-bulk-start:not([disabled])')
  await page.click('#confirm-bulk-start')
  await page.waitForSelector('#bulk-progress >> text=Done')
  t.equal(await text(page, '#bulk-progress'), 'Done: 3 cancelled, 0 skipped, of 3 matched.', 'the job reached done')
  const job = (await getJson(`${server.url}/v1/runs/bulk`)).body.data[0]
  t.match(
    await text(page, `#bulk-jobs tr[data-id="${job.id}"]`),
    /^cancel function flow-plain, status waiting, in every environment done 3 matched, 3 cancelled, 0 skipped /,
  )
  for (const run of waiting) await runWhen(server.url, run.event_id, 'flow-plain', (r) => r.status === 'cancelled')
  await page.waitForSelector('#runs', { state: 'detached' })
  t.match(await text(page, '.empty'), /No runs match these filters/, 'the list, refreshed, has no waiting run left')
  await screenshot(page, 'runs-bulk-done-desktop')
  t.same(errorsOf(page), [], 'no script or console errors')
})

t.test('bulk replay by event name and time: new runs of the same events, or failed runs retried', async (t) => {
  const [failedId] = await send('flow/plain', [{ n: unique(), fail: true }])
  const failed = await runWhen(server.url, failedId, 'flow-plain', hasEnded)
  t.equal(failed.status, 'failed')
  // A minute before, as the datetime-local input takes it (local time, to the minute).
  const from = new Date(Date.parse(failed.queued_at) - 60_000 - new Date().getTimezoneOffset() * 60_000)
    .toISOString()
    .slice(0, 16)
  const page = await open(t, '/runs')
  await page.waitForSelector('#run-filters')
  await page.fill('#run-filters input[name=event_name]', 'flow/plain')
  await page.fill('#run-filters input[name=from]', from)
  await page.selectOption('#run-filters select[name=status]', 'failed')
  await page.click('#run-filters button[type=submit]')
  t.match(page.url(), /status=failed&event_name=flow%2Fplain&from=/, 'the filters are in the URL')
  // The unfiltered list stays up while the filtered one loads: wait for the one the filters give (a
  // list with no run in it yet is not it: every badge of none is "failed").
  await page.waitForFunction(() => {
    const badges = [...document.querySelectorAll('#runs tbody .badge')]
    return badges.length > 0 && badges.every((b) => b.textContent === 'failed')
  })
  t.same(
    await page.locator('#runs tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id'))),
    [failed.run_id],
    'only the failed run of that name queued since then',
  )
  t.match(
    await text(page, '#bulk > p'),
    /^On the runs the filters above match: status failed, event flow\/plain, queued after .+, in every environment\.$/,
  )

  await page.click('#bulk-replay')
  await page.waitForSelector('#bulk-count >> text=This will')
  t.equal(await text(page, '#bulk-count'), 'This will replay 1 run: a new run of its event.')
  // Every text the count shows from here: the count of new runs is never put in a retry's words.
  await page.evaluate(() => {
    const count = document.querySelector('#bulk-count')!
    const seen: string[] = []
    ;(window as any).countTexts = seen
    new MutationObserver(() => {
      if (seen.at(-1) !== count.textContent) seen.push(count.textContent ?? '')
    }).observe(count, { childList: true, characterData: true, subtree: true })
  })
  await page.check('#confirm-bulk input[type=radio] >> nth=1')
  await page.waitForSelector('#bulk-count >> text=This will retry 1 run from its last completed step.')
  t.same(
    await page.evaluate(() => (window as any).countTexts),
    ['Counting…', 'This will retry 1 run from its last completed step.'],
    'counting, then the count of failed runs to retry',
  )
  await page.check('#confirm-bulk input[type=radio] >> nth=0')
  await page.waitForSelector('#bulk-count >> text=replay 1 run')
  await page.click('#confirm-bulk-start')
  await page.waitForSelector('#bulk-progress >> text=Done')
  t.equal(await text(page, '#bulk-progress'), 'Done: 1 replayed, 0 skipped, of 1 matched.')
  const runs = await eventually(async () => {
    const { body } = await getJson(`${server.url}/v1/events/${failedId}/runs`)
    return body.data.length === 2 && body.data.every(hasEnded) ? body.data : undefined
  })
  t.same(
    runs.map((r: any) => r.status),
    ['failed', 'failed'],
    'a new run of the same event (it fails again, by design)',
  )
  await page.waitForSelector(`#runs tbody tr >> nth=1`)
  t.equal(await page.locator('#runs tbody tr').count(), 2, 'the list, refreshed, shows the new run too')
  t.same(errorsOf(page), [], 'no script or console errors')
})

t.test(
  'a rate-limited event’s run is listed as skipped with why, on the runs list, its page and its event',
  async (t) => {
    const user = unique()
    const ids = await send(
      'flow/limited',
      [1, 2, 3, 4].map((n) => ({ user, n })),
    )
    const runs = await Promise.all(ids.map((id) => runWhen(server.url, id, 'flow-limited', hasEnded)))
    const skipped = runs.find((r) => r.status === 'skipped')
    t.ok(skipped, 'the fourth in a minute is skipped')
    const why = `over the rate limit of 3 per 60 s (key "${user}")`

    const page = await open(t, '/runs?function=flow-limited&status=skipped')
    await page.waitForSelector(runRow(skipped.run_id))
    t.equal(await text(page, `${runRow(skipped.run_id)} td:first-child`), `skipped ${why}`, 'the row says why')

    await page.click(`${runRow(skipped.run_id)} a:has-text("flow-limited")`)
    await page.waitForSelector('#run-state')
    t.equal(await text(page, '#run-state'), `Skipped (RATE_LIMITED): ${why}.`, 'the page: code and message')
    t.match(await text(page, '#run-detail'), /Result None: flow control started no run for this event\./)
    await screenshot(page, 'run-skipped-desktop')

    await page.click('#run-detail .meta a')
    await page.waitForSelector('#event-runs')
    const escaped = why.replace(/[().]/g, '\\$&')
    t.match(
      await text(page, '#event-runs tbody'),
      new RegExp(`^flow-limited skipped ${escaped} \\d+ \\d+ ms$`),
      "the event's runs list says why",
    )
    t.same(errorsOf(page), [], 'no script or console errors')
  },
)

t.test('a batch run’s page lists its events, each linking to an event that finds the run', async (t) => {
  const ids = await send(
    'flow/batched',
    [1, 2, 3].map((n) => ({ n: `${unique()}-${n}` })),
  )
  const run = await runWhen(server.url, ids[0], 'flow-batched', (r) => r.status === 'completed')
  t.equal(run.event_ids.length, 3, 'one run of the three (maxSize 3)')
  const page = await open(t, `/runs/${run.run_id}`)
  await page.waitForSelector('#batch-events')
  t.match(await text(page, '#run-detail .meta'), /Batch 3 events, in the order the function got them:/)
  t.same(
    await page.locator('#batch-events a').evaluateAll((as) => as.map((a) => a.getAttribute('href'))),
    run.event_ids.map((id: string) => `#/events/${id}`),
  )
  await page.click('#batch-events li:nth-child(3) a')
  await page.waitForSelector(`#event-runs a[href="#/runs/${run.run_id}"]`)
  t.pass("the third event's runs list has the batch run")
  t.same(errorsOf(page), [], 'no script or console errors')
})

t.test('a run cancelled by a newer singleton run links the run that replaced it', async (t) => {
  const account = unique()
  const [oldId] = await send('flow/latest-wins', [{ account }])
  await runWhen(server.url, oldId, 'flow-latest-wins', isWaiting)
  const [newId] = await send('flow/latest-wins', [{ account }])
  const cancelled = await runWhen(server.url, oldId, 'flow-latest-wins', hasEnded)
  const replacing = await runWhen(server.url, newId, 'flow-latest-wins', () => true)
  const page = await open(t, `/runs/${cancelled.run_id}`)
  await page.waitForSelector('#run-state')
  t.match(
    await text(page, '#run-state'),
    new RegExp(`^Cancelled by run ${replacing.run_id}, a newer run of the same singleton key at .+\\.$`),
  )
  t.equal(await page.getAttribute('#run-state a', 'href'), `#/runs/${replacing.run_id}`)
  t.same(errorsOf(page), [], 'no script or console errors')
})
