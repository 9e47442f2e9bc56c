// The webhook page's signature check in a real Chromium against a real Dev Server: the timestamp
// tolerance is set and its refusal shown, a key rotation accepts the old and the new secret until it
// is ended from the page, and the delivery ID is set to a header, to none and back to the default.
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from '../infra/chromium.ts'
import { getJson, startServer } from '../helpers/server.ts'
import { createWebhook, deliver, hmacHex, outcome, type Webhook } from '../webhooks/helpers.ts'
import { stripeInvoicePaid } from '../webhooks/payloads.ts'
import { ensureDashboardBuilt, errorsOf, openPage } from './browser.ts'

await ensureDashboardBuilt()
const server = await startServer()
t.teardown(() => server.stop())
const browser: Browser = await launchChromium()
t.teardown(() => browser.close())

const OLD = 'whsec_old_0123456789'
const NEW = 'whsec_new_9876543210'
const webhookOf = async (id: string) => (await getJson(`${server.url}/v1/webhooks/${id}`)).body.data

/** Saves the form and waits for its answer: "Saved." (then the page has reloaded the webhook) or the error shown. */
async function save(page: Page, id: string): Promise<string> {
  const before = (await webhookOf(id)).updated_at
  await page.click('#save-webhook')
  const answer = await page.waitForSelector('#save-status .ok, #save-status .error')
  if ((await answer.getAttribute('class')) !== 'ok') return (await answer.textContent()) ?? ''
  const after = (await webhookOf(id)).updated_at
  if (after !== before) await page.waitForSelector(`#edit-webhook[data-updated-at="${after}"]`)
  return 'saved'
}

let sent = 0
/** What became of a Stripe request signed with `secret`, as Stripe signs: t and v1 over "<t>.<body>". */
async function stripeRequest(hook: Webhook, secret: string): Promise<string> {
  const body = JSON.stringify({ ...stripeInvoicePaid, id: `evt_dashboard_${++sent}` })
  const ts = String(Math.floor(Date.now() / 1000))
  const request = await deliver(hook.url, body, {
    'Stripe-Signature': `t=${ts},v1=${hmacHex(secret, `${ts}.${body}`)}`,
  })
  if (request.status !== 200) throw new Error(`refused: ${JSON.stringify(request.body)}`)
  const result = await outcome(server.url, hook.id, request.body.request_id)
  return result.error?.code ?? result.status
}

t.test('the tolerance is shown for presets with a signed timestamp, set, and refused out of bounds', async (t) => {
  const hook = await createWebhook(server.url, {
    name: 'stripe-tolerance',
    verification: { preset: 'stripe', secret: OLD },
  })
  const page = await openPage(t, browser, `${server.url}/dashboard/#/webhooks/${hook.id}`)
  const tolerance = await page.waitForSelector('input[name=tolerance_seconds]')
  t.equal(await tolerance.inputValue(), '300', 'the default, as the API shows it')

  await page.fill('input[name=tolerance_seconds]', '60')
  t.match(await save(page, hook.id), /^verification\.secret: /)
  t.equal((await webhookOf(hook.id)).verification.tolerance_seconds, 300, 'nothing changed without the secret')

  await page.fill('input[name=secret]', OLD)
  await page.fill('input[name=tolerance_seconds]', '60')
  t.equal(await save(page, hook.id), 'saved')
  t.equal((await webhookOf(hook.id)).verification.tolerance_seconds, 60)
  t.equal(await page.inputValue('input[name=tolerance_seconds]'), '60', 'the page shows the saved tolerance')

  await page.fill('input[name=secret]', OLD)
  await page.fill('input[name=tolerance_seconds]', '4')
  t.equal(
    await save(page, hook.id),
    'VERIFICATION_INVALID: verification.tolerance_seconds: must be a whole number of seconds from 5 to 3600',
    "the API's refusal, shown as other errors are",
  )
  t.equal((await webhookOf(hook.id)).verification.tolerance_seconds, 60, 'the refused tolerance changed nothing')

  await page.selectOption('select[name=preset]', 'github')
  t.equal(await page.$('input[name=tolerance_seconds]'), null, 'github signs no timestamp: no tolerance field')
  t.same(errorsOf(page), [])
})

t.test('a rotation accepts the old and the new secret until it is ended from the page', async (t) => {
  const hook = await createWebhook(server.url, {
    name: 'stripe-rotation',
    verification: { preset: 'stripe', secret: OLD },
  })
  const page = await openPage(t, browser, `${server.url}/dashboard/#/webhooks/${hook.id}`)
  await page.waitForSelector('#rotate-secret')
  t.equal(await page.$('#rotation-state'), null, 'no rotation yet')
  t.equal(await page.textContent('#rotate-secret'), 'Rotate secret')

  await page.click('#rotate-secret')
  await page.fill('input[name=secret]', NEW)
  t.match(await save(page, hook.id), /^verification\.previous_secret: type the secret the sender signs with now/)
  await page.fill('input[name=previous_secret]', OLD)
  t.equal(await save(page, hook.id), 'saved')
  t.equal((await webhookOf(hook.id)).verification.rotating, true)
  t.equal(await page.textContent('#rotation-state'), 'Rotating: the previous secret is still accepted.')
  t.equal(await stripeRequest(hook, OLD), 'delivered', 'the previous secret is still accepted')
  t.equal(await stripeRequest(hook, NEW), 'delivered', 'and so is the new one')

  // Saving other settings keeps the rotation: the verification is not sent when nothing in it changed.
  await page.fill('input[name=name]', 'stripe-rotated')
  t.equal(await save(page, hook.id), 'saved')
  t.equal((await webhookOf(hook.id)).verification.rotating, true)

  await page.click('#rotate-secret')
  t.equal(await page.textContent('#rotate-secret'), 'Keep rotating')
  t.match(await save(page, hook.id), /^verification\.secret: /, 'ending it needs the secret the sender uses now')
  await page.fill('input[name=secret]', NEW)
  t.equal(await save(page, hook.id), 'saved')
  t.equal((await webhookOf(hook.id)).verification.rotating, false)
  t.equal(await page.$('#rotation-state'), null, 'the page no longer says rotating')
  t.equal(await stripeRequest(hook, NEW), 'delivered')
  t.equal(await stripeRequest(hook, OLD), 'SIGNATURE_INVALID', 'the previous secret is no longer accepted')
  t.same(errorsOf(page), [])
})

t.test('the delivery ID is set to a header, to none and back to the preset default', async (t) => {
  const hook = await createWebhook(server.url, {
    name: 'github-delivery',
    verification: { preset: 'github', secret: OLD },
  })
  const page = await openPage(t, browser, `${server.url}/dashboard/#/webhooks/${hook.id}`)
  await page.waitForSelector('#delivery-id-current')
  t.equal(await page.textContent('#delivery-id-current'), 'header:X-GitHub-Delivery', "the preset's default")

  const choose = async (mode: string, header?: string) => {
    await page.selectOption('select[name=delivery_id_mode]', mode)
    if (header !== undefined) await page.fill('input[name=delivery_id]', header)
    return save(page, hook.id)
  }
  t.equal(await choose('header', 'X-Request-Id'), 'saved')
  t.equal((await webhookOf(hook.id)).delivery_id, 'header:X-Request-Id')
  t.equal(await page.textContent('#delivery-id-current'), 'header:X-Request-Id')

  t.match(await choose('header', 'not a header'), /^REQUEST_INVALID: delivery_id: a header name/)
  t.equal((await webhookOf(hook.id)).delivery_id, 'header:X-Request-Id', 'the refused name changed nothing')

  t.equal(await choose('none'), 'saved')
  t.equal((await webhookOf(hook.id)).delivery_id, 'none')
  t.equal(await choose('default'), 'saved')
  t.equal((await webhookOf(hook.id)).delivery_id, 'header:X-GitHub-Delivery')
  t.equal((await webhookOf(hook.id)).verification.preset, 'github', 'the signature check was left as it was')
  t.same(errorsOf(page), [])
})
