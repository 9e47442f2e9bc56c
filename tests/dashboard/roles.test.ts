// Tokens and roles in the dashboard, in a real Chromium against sluice start: the signing key (admin)
// sees Tokens and Audit, creates a viewer token shown once; signed in with it, the header says who is
// signed in and the admin pages are gone from the navigation; the audit page lists the creation.
import t from 'tap'
import { launchChromium } from '../infra/chromium.ts'
import { startServer, TEST_SIGNING_KEY } from '../helpers/server.ts'
import { ensureDashboardBuilt, errorsOf, openPage } from './browser.ts'

t.test('an admin hands out a viewer token; the viewer sees what a viewer may do', async (t) => {
  await ensureDashboardBuilt()
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const server = await startServer({ mode: 'start' })
  t.teardown(() => server.stop())
  const page = await openPage(t, browser, `${server.url}/dashboard/#/tokens`, 'desktop')
  await page.fill('#signing-key', TEST_SIGNING_KEY)
  await page.press('#signing-key', 'Enter')
  await page.waitForSelector('#signed-in:has-text("signing key (admin)")')
  t.ok(await page.isVisible('nav a:has-text("Audit")'), 'an admin sees the audit log')
  await page.goto(`${server.url}/dashboard/#/tokens`)
  await page.fill('#create-token input[name=name]', 'contractor')
  await page.selectOption('#create-token select[name=role]', 'viewer')
  await page.click('#create-token button[type=submit]')
  const token = (await page.textContent('#new-token'))!.trim()
  t.match(token, /^slt_/, 'shown once')
  await page.waitForSelector('#tokens:has-text("contractor")')
  t.notOk((await page.textContent('#tokens'))!.includes(token), 'never listed')
  await page.goto(`${server.url}/dashboard/#/audit`)
  await page.waitForSelector('#audit:has-text("POST /v1/tokens")')
  t.pass('the creation is in the audit log')
  await page.fill('#signing-key', token)
  await page.press('#signing-key', 'Enter')
  await page.waitForSelector('#signed-in:has-text("contractor (viewer)")')
  t.notOk(await page.isVisible('nav a:has-text("Tokens")'), 'a viewer does not see the admin pages')
  t.same(
    errorsOf(page).filter((e) => !/403|FORBIDDEN/.test(e)),
    [],
    'no script errors',
  )
})
