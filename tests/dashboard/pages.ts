// Every page of the dashboard, with data and empty, at one size (pages-desktop.test.ts at 1280×800,
// pages-phone.test.ts at 390×844): axe-core finds no serious or critical violation, nothing
// overflows the width, no script or console error. Screenshots go to tests/dashboard/screenshots/
// (gitignored) for a person to look at.
import t from 'tap'
import { launchChromium } from '../infra/chromium.ts'
import { eventually, getJson, postJson, ROOT, startServer } from '../helpers/server.ts'
import { finishedRuns, sendEvent } from '../functions/fixtures/rest.ts'
import { ensureDashboardBuilt, errorsOf, openPage, screenshot, seriousViolations, type SIZES } from './browser.ts'
import { hasEnded, runWhen, waitingOrder } from './runs.ts'
import { startJsApp } from '../sdk/js-app.ts'

type Page = [name: string, path: string, readySelector: string]

/** Also seen in the system's dark mode. */
const DARK = new Set(['events', 'functions', 'run', 'run-waiting', 'webhook', 'schema'])

/**
 * Data worth looking at: long names and payloads, a webhook with a transform and a failed delivery, a failed
 * run, a run waiting for an event, one an event cancelled and one an event resumed; flow control: a paused
 * function, a rate-limited run (skipped), a batch run and a bulk cancel; a schema in two versions and, with
 * production in warn mode, events that violate it (seeded last: the events before are checked by nothing).
 */
async function seed(url: string): Promise<Page[]> {
  const longName = `app/${'very-long-event-name-'.repeat(8)}end`
  const [eventId, longId] = (
    await postJson(`${url}/e/dev`, [
      {
        name: 'shop/order.placed',
        data: { sku: 'A1', amount: 12, customer: { name: 'Ada Lovelace', tags: ['vip', 'beta'] } },
      },
      {
        name: longName,
        id: `dedup-${'x'.repeat(120)}`,
        data: { text: 'lorem ipsum '.repeat(400), nested: { a: { b: { c: { d: [1, 2, 3] } } } } },
      },
      { name: 'app/user.signed-up', data: { plan: 'pro' } },
    ])
  ).body.ids
  const [run] = await finishedRuns(url, eventId)
  const waiting = await waitingOrder(url, 'order-waiting-for-its-payment')
  const refunded = await waitingOrder(url, 'order-refunded')
  await sendEvent(url, { name: 'test/refunded', data: { order: 'order-refunded' } })
  await runWhen(url, refunded.event_id, 'waits-orders', (r) => r.status === 'cancelled')
  const paid = await waitingOrder(url, 'order-paid')
  await sendEvent(url, { name: 'test/paid', data: { order: 'order-paid', amount: 12 } })
  await runWhen(url, paid.event_id, 'waits-orders', (r) => r.status === 'completed')
  const transform =
    'function transform(evt) {\n  if (!evt.type) throw new Error("no type")\n  return { name: "stripe/" + evt.type, data: evt, id: evt.id }\n}'
  const { body: hook } = await postJson(`${url}/v1/webhooks`, { name: 'stripe', transform })
  await postJson(hook.data.url, { type: 'invoice.paid', id: 'evt_1' })
  await postJson(hook.data.url, { id: 'evt_2' })
  await eventually(async () =>
    (await getJson(`${url}/v1/webhooks/${hook.data.id}/requests`)).body.data.length === 2 ? true : undefined,
  )
  await postJson(`${url}/v1/functions/flow-plain/pause`, {})
  const limited = (
    await postJson(
      `${url}/e/dev`,
      [1, 2, 3, 4].map((n) => ({ name: 'flow/limited', data: { user: 'ada', n } })),
    )
  ).body.ids as string[]
  const limitedRuns = await Promise.all(limited.map((id) => runWhen(url, id, 'flow-limited', hasEnded)))
  const skipped = limitedRuns.find((r) => r.status === 'skipped')
  const [batchFirst] = (
    await postJson(
      `${url}/e/dev`,
      [1, 2, 3].map((n) => ({ name: 'flow/batched', data: { n } })),
    )
  ).body.ids
  const batch = await runWhen(url, batchFirst, 'flow-batched', hasEnded)
  const { body: job } = await postJson(`${url}/v1/runs/bulk`, {
    action: 'cancel',
    filter: { function: 'flow-limited' },
  })
  await eventually(async () =>
    (await getJson(`${url}/v1/runs/bulk/${job.data.id}`)).body.data.status === 'done' ? true : undefined,
  )
  await postJson(`${url}/v1/keys`, { env: 'production' })
  await postJson(`${url}/v1/envs`, { name: 'staging' })
  await eventually(async () => ((await getJson(`${url}/v1/events/${longId}`)).status === 200 ? true : undefined))
  const cart = await seedSchema(url)
  const app = await startJsApp({ major: 'v4', appId: 'shop-app', baseUrl: url })
  t.teardown(() => app.close())
  await postJson(`${url}/v1/apps`, { url: app.url })
  return [
    ['events', '/events', '#events'],
    ['event', `/events/${eventId}`, '#event-runs'],
    ['event-long', `/events/${longId}`, '#event-detail'],
    ['functions', '/functions', '#functions'],
    ['apps', '/apps', '#apps'],
    ['runs', '/runs', '#bulk-jobs'],
    ['runs-skipped', '/runs?status=skipped', '#runs .skip-reason'],
    ['run', `/runs/${run.run_id}`, '#timeline'],
    ['run-waiting', `/runs/${waiting.run_id}`, '#run-state'],
    ['run-cancelled', `/runs/${refunded.run_id}`, '#run-state'],
    ['run-waited', `/runs/${paid.run_id}`, '#timeline .pause-text a'],
    ['run-skipped', `/runs/${skipped.run_id}`, '#run-state'],
    ['run-batch', `/runs/${batch.run_id}`, '#batch-events'],
    ['webhooks', '/webhooks', '#webhooks'],
    ['webhook', `/webhooks/${hook.data.id}`, '#deliveries'],
    ['keys', '/keys', '#keys'],
    ['envs', '/envs', '#envs'],
    ['send', '/send', '#send'],
    ['insights', '/insights', '#webhook-failures'],
    ['schemas', '/schemas', '#schemas'],
    ['schema', `/schemas/${encodeURIComponent(cart)}?env=production`, '#schema-versions'],
  ]
}

const EMPTY: Page[] = [
  ['empty-events', '/events', '.empty'],
  ['empty-functions', '/functions', '.empty'],
  ['empty-apps', '/apps', '.empty'],
  ['empty-runs', '/runs', '.empty'],
  ['empty-webhooks', '/webhooks', '.empty'],
  ['empty-incidents', '/incidents', '.empty'],
  ['empty-schemas', '/schemas', '.empty'],
]

/** A schema of two versions for a name no function listens to, and two events that break it (warn mode). */
async function seedSchema(url: string): Promise<string> {
  const name = 'shop/cart.updated'
  const call = (method: string, path: string, body: unknown) =>
    fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const v1 = {
    type: 'object',
    properties: { items: { type: 'integer', minimum: 0 }, currency: { enum: ['EUR', 'USD'] } },
    required: ['items'],
    additionalProperties: false,
  }
  const v2 = { ...v1, properties: { ...v1.properties, coupon: { type: 'string', format: 'uuid' } } }
  for (const schema of [v1, v2]) await call('PUT', `/v1/schemas/${encodeURIComponent(name)}`, { schema })
  await call('PATCH', '/v1/envs/production', { schema_mode: 'warn' })
  await postJson(`${url}/e/dev`, [
    { name, data: { items: 'three', currency: 'GBP' } },
    { name, data: { items: 2, coupon: 'not-a-uuid' } },
  ])
  return name
}

export async function checkEveryPage(size: keyof typeof SIZES): Promise<void> {
  // About two minutes for 30-odd pages on a loaded 2-core machine (tap's default is 120 s): the margin is for load.
  t.setTimeout(300_000)
  await ensureDashboardBuilt()
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const empty = await startServer()
  t.teardown(() => empty.stop())
  const server = await startServer({ flags: { functionsFile: `${ROOT}tests/dashboard/fixtures/functions.ts` } })
  t.teardown(() => server.stop())
  const pages = [...(await seed(server.url)).map((p) => [...p, server.url]), ...EMPTY.map((p) => [...p, empty.url])]

  const schemes = pages.flatMap(([name, ...rest]) => [
    [name, ...rest, 'light'],
    ...(DARK.has(name) ? [[name, ...rest, 'dark']] : []),
  ])
  for (const [name, path, ready, base, scheme] of schemes) {
    const label = `${name}-${size}${scheme === 'dark' ? '-dark' : ''}`
    t.test(`${label}: no serious accessibility violation, fits the width, no errors`, async (t) => {
      const page = await openPage(t, browser, `${base}/dashboard/#${path}`, size, scheme as 'light' | 'dark')
      await page.waitForSelector(ready)
      if (name === 'webhook') await page.waitForSelector('#transform .cm-content')
      if (name === 'insights') {
        t.match(
          await page.textContent('#webhook-failures'),
          /TRANSFORM_THREW.*stripe\s*1/s,
          'the failed delivery, by code',
        )
        t.match(
          await page.textContent('#run-outcomes tr:has-text("shop-checkout")'),
          /shop-checkout\s*0\s*1/,
          'the failed run',
        )
      }
      await page.waitForFunction(() => document.querySelectorAll('[aria-busy=true]').length === 0)
      t.same(await seriousViolations(page), [], 'axe-core: no serious or critical violation')
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      )
      t.ok(overflow <= 0, `no sideways scrolling of the page (overflow ${overflow} px)`)
      t.same(errorsOf(page), [], 'no script or console errors')
      await screenshot(page, label)
    })
  }
}
