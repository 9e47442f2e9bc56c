// The dashboard in a real Chromium against a real Dev Server: send an event, find it, build a
// webhook transform with the preview, the central page of a branch-group webhook, keys and
// environments, the signing key on a production server.
import t, { type Test } from 'tap'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from '../infra/chromium.ts'
import { startServer, getJson, postJson, eventually, TEST_SIGNING_KEY } from '../helpers/server.ts'
import { ensureDashboardBuilt, errorsOf, openPage, setEditor } from './browser.ts'

await ensureDashboardBuilt()
const server = await startServer()
t.teardown(() => server.stop())
const browser: Browser = await launchChromium()
t.teardown(() => browser.close())

const open = (t: Test, path: string): Promise<Page> => openPage(t, browser, `${server.url}/dashboard/#${path}`)

t.test('"Send event" posts to the Dev Server and the event shows in the events list', async (t) => {
  const page = await open(t, '/send')
  await page.fill('input[name=server]', server.url)
  await page.fill('textarea[name=event]', JSON.stringify({ name: 'dash/sent', data: { from: 'browser' } }))
  await page.click('#send button')
  await page.waitForSelector('#send-result .ok')
  const id = /Sent: (\w+)/.exec((await page.textContent('#send-result'))!)![1]
  await eventually(async () => ((await getJson(`${server.url}/v1/events/${id}`)).status === 200 ? true : undefined))
  await page.goto(`${server.url}/dashboard/#/events?name=dash%2Fsent`)
  const row = page.locator(`#events tr[data-id="${id}"]`)
  await row.click()
  await page.waitForSelector('#event-detail')
  t.equal(await page.textContent('#event-internal-id'), id)
  t.match(await page.textContent('#event-detail [aria-label="Event data"]'), /"from".*"browser"/)
  t.notMatch(await page.textContent('main'), /null|undefined|NaN/, 'no stray null, undefined or NaN text on the page')
  t.same(errorsOf(page), [], 'no script or console errors on the page')
})

t.test('filters typed but not yet applied survive the events list updating live', async (t) => {
  await postJson(`${server.url}/e/dev`, { name: 'dash/before-typing', data: {} })
  const page = await open(t, '/events')
  await page.waitForSelector('#events >> text=dash/before-typing')
  await page.fill('#event-filters input[name=name]', 'dash/typed')
  await page.selectOption('#event-filters select[name=source]', 'api')
  // A new event re-renders the page; a controlled field went back to the URL's (empty) filter.
  await postJson(`${server.url}/e/dev`, { name: 'dash/while-typing', data: {} })
  await page.waitForSelector('#events >> text=dash/while-typing')
  t.equal(await page.inputValue('#event-filters input[name=name]'), 'dash/typed', 'the typed name is kept')
  t.equal(await page.inputValue('#event-filters select[name=source]'), 'api', 'the chosen source is kept')
  await page.click('#event-filters button[type=submit]')
  await page.waitForURL(/name=dash%2Ftyped&source=api/)
  await page.click('#event-filters a:text-is("Clear")')
  await page.waitForURL(/#\/events$/)
  // The form is rebuilt on the render after the hash changes, which can follow waitForURL.
  await page
    .waitForFunction(
      () => document.querySelector<HTMLInputElement>('#event-filters input[name=name]')?.value === '',
      null,
      {
        timeout: 5000,
      },
    )
    .catch(() => {})
  t.equal(await page.inputValue('#event-filters input[name=name]'), '', 'a change of the URL starts the form afresh')
  t.equal(await page.inputValue('#event-filters select[name=source]'), '', 'its selects too')
})

t.test('a bad event in "Send event" shows the server error, naming the field', async (t) => {
  const page = await open(t, '/send')
  await page.fill('input[name=server]', server.url)
  await page.fill('textarea[name=event]', JSON.stringify({ name: '', data: {} }))
  await page.click('#send button')
  await page.waitForSelector('#send-result .error')
  t.equal(await page.textContent('#send-result'), 'EVENT_INVALID: events[0].name: must be a non-empty string')
  t.same(errorsOf(page), [], 'no script errors on the page (the 400 is the answer, not an error)')
})

t.test('a webhook is created, its transform edited and previewed as you type, then saved', async (t) => {
  const page = await open(t, '/webhooks')
  await page.fill('#create-webhook input[name=name]', 'stripe')
  await page.click('#create-webhook button')
  await page.waitForSelector('#edit-webhook')
  t.match(await page.textContent('#webhook-url'), new RegExp(`^${server.url}/e/wh_`))
  await setEditor(
    page,
    '#transform',
    'function transform(evt) { return { name: "stripe/" + evt.type, data: evt, id: evt.id } }',
  )
  await page.waitForSelector('#preview-result >> text=stripe/invoice.paid')
  t.match(await page.textContent('#preview-result'), /1 event.*"name".*"stripe\/invoice\.paid".*"id".*"evt_1"/s)
  await page.fill('textarea[name=deny_events]', 'stripe/charge.*')
  await page.click('#save-webhook')
  await page.waitForSelector('#save-status .ok')
  const { body } = await getJson(`${server.url}/v1/webhooks`)
  t.match(body.data, [{ name: 'stripe', transform: /stripe\//, deny_events: ['stripe/charge.*'] }])
  t.same(errorsOf(page), [], 'no script errors on the page')
})

t.test(
  "a branch-group webhook's central page lists unrouted requests and replays them once the environment exists",
  async (t) => {
    const { body: created } = await postJson(`${server.url}/v1/webhooks`, {
      name: 'central',
      env: 'branch',
      transform: 'function transform(evt) { return { name: "central/" + evt.type, data: evt } }',
    })
    const webhook = created.data
    t.equal((await postJson(webhook.url, { type: 'ping' }, { 'x-service-env': 'pr-77' })).status, 200)
    await eventually(async () =>
      (await getJson(`${server.url}/v1/webhooks/${webhook.id}/requests?status=unrouted`)).body.data.length === 1
        ? true
        : undefined,
    )
    const page = await open(t, `/webhooks/${webhook.id}`)
    await page.waitForSelector('#unrouted >> text=pr-77')
    t.match(
      await page.textContent('#unrouted'),
      /pr-77.*central\/ping/s,
      'the environment it named and the events it carries',
    )
    t.equal((await postJson(`${server.url}/v1/envs`, { name: 'pr-77', branch: true })).status, 201)
    await page.click('#replay-unrouted')
    await eventually(async () => {
      await page.reload()
      await page.waitForSelector('#edit-webhook')
      await page.waitForSelector('#unrouted-title')
      return (await page.locator('#unrouted tr').count()) === 0 ? true : undefined
    })
    const { body } = await getJson(`${server.url}/v1/events?name=central/ping&env=pr-77`)
    t.equal(body.data.length, 1, 'delivered to the branch environment on replay')
    t.same(errorsOf(page), [], 'no script errors on the page')
  },
)

t.test('a preview of a transform that throws shows its error inline, on the line that threw', async (t) => {
  const { body } = await getJson(`${server.url}/v1/webhooks`)
  const page = await open(t, `/webhooks/${body.data[0].id}`)
  await page.waitForSelector('#edit-webhook')
  await setEditor(
    page,
    '#transform',
    'function transform(evt) {\n  const kind = evt.type\n  throw new Error("nope: " + kind)\n}',
  )
  await page.waitForSelector('#preview-result .error').catch(async (err: Error) => {
    throw new Error(`${err.message}\nthe preview showed: ${await page.textContent('#preview-result')}`)
  })
  t.match(await page.textContent('#preview-result'), /^TRANSFORM_THREW: Error: nope: invoice\.paid \(line 3\)/)
  await page.waitForSelector('#transform .cm-lintRange-error')
  const lines = await page
    .locator('#transform .cm-line')
    .evaluateAll((all) => all.map((line, i) => (line.querySelector('.cm-lintRange-error') ? i + 1 : 0)).filter(Boolean))
  t.same(lines, [3], 'the error is marked on line 3, where the transform threw')
  await page.hover('#transform .cm-lint-marker-error')
  await page.waitForSelector('.cm-tooltip-lint >> text=TRANSFORM_THREW')
  t.pass('its message is shown on the marker')
  t.same(errorsOf(page), [], 'no script errors on the page')
})

t.test('a transform typed key by key is previewed once typing pauses, not at every key', async (t) => {
  const { body } = await postJson(`${server.url}/v1/webhooks`, { name: 'typed' })
  const page = await open(t, `/webhooks/${body.data.id}`)
  await page.waitForSelector('#preview-result :is(.ok, .error)') // the preview of the saved transform
  let previews = 0
  page.on('request', (request) => {
    if (request.url().endsWith('/preview')) previews++
  })
  const typed = 'function transform(e) { return { name: "typed/" + e.type, data: e } }'
  await page.click('#transform .cm-content')
  await page.keyboard.press('Control+A')
  await page.keyboard.press('Delete')
  // CodeMirror closes brackets and quotes as they open; typing the closing one steps over it.
  await page.keyboard.type(typed, { delay: 15 })
  await page.waitForSelector('#preview-result >> text=typed/invoice.paid')
  await page.waitForTimeout(600) // a preview still to come would have started by now
  // One after the last key; a second if typing paused somewhere for longer than the debounce.
  t.ok(previews >= 1 && previews <= 2, `${typed.length} keys typed, ${previews} previews run`)
  t.same(errorsOf(page), [], 'no script errors on the page')
})

t.test('a key is created and shown once; environments are listed', async (t) => {
  const page = await open(t, '/keys')
  await page.click('#create-key button')
  await page.waitForSelector('#new-key')
  t.match(await page.textContent('#new-key'), /^sk_/)
  await page.goto(`${server.url}/dashboard/#/envs`)
  await page.fill('#create-env input[name=name]', 'feature-1')
  await page.check('#create-env input[name=branch]')
  await page.click('#create-env button')
  await page.waitForSelector('#envs >> text=feature-1')
  t.match(await page.textContent('#envs'), /production.*feature-1.*branch/s)
  await page.fill('#create-env input[name=name]', 'limited-1')
  await page.fill('#create-env input[name=rate]', '250')
  await page.click('#create-env button')
  await page.waitForSelector('#envs >> text=limited-1')
  t.match(
    await page.textContent('#envs tr:has-text("limited-1")'),
    /250 events\/s/,
    'the rate limit set at creation is shown',
  )
  t.match(await page.textContent('#envs tr:has-text("production")'), /no rate limit/)
  t.same(errorsOf(page), [], 'no script errors on the page')
})

t.test('the environment switcher lists environments and scopes the Events page', async (t) => {
  await postJson(`${server.url}/v1/envs`, { name: 'staging' })
  await postJson(`${server.url}/e/dev`, { name: 'dash/in-production', data: {} })
  const page = await open(t, '/events')
  await page.waitForSelector('#env-switcher option:text-is("staging")', { state: 'attached' })
  await page.waitForSelector('#events >> text=dash/in-production')
  await page.selectOption('#env-switcher', 'staging')
  await page.waitForSelector('.empty >> text=No events')
  t.equal(
    await page.locator('#events >> text=dash/in-production').count(),
    0,
    'production events are not shown for staging',
  )
  await page.reload()
  t.equal(await page.inputValue('#env-switcher'), 'staging', 'the choice is remembered')
  await page.selectOption('#env-switcher', '')
})

t.test('on a production server the dashboard asks for the signing key', async (t) => {
  const prod = await startServer({ mode: 'start' })
  t.teardown(() => prod.stop())
  const page = await browser.newPage()
  t.teardown(() => page.close())
  await page.goto(`${prod.url}/dashboard/#/events`)
  await page.waitForSelector('#sign-in')
  t.pass('it shows the sign-in page, and the key field')
  await page.fill('#signing-key', TEST_SIGNING_KEY)
  await page.dispatchEvent('#signing-key', 'change')
  await page.waitForSelector('#live-status >> text=Live')
  // At once: the chart's UNAUTHORIZED from before the key is not shown while it asks again.
  const alerts = page.locator('[role=alert]')
  t.same(await alerts.allTextContents(), [], 'no error once the key is set')
})
