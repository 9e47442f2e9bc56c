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

t.test('a user signs in with a password, acts within their role, and signs out', async (t) => {
  await ensureDashboardBuilt()
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const server = await startServer({ mode: 'start' })
  t.teardown(() => server.stop())
  const password = 'a password long enough'
  // An admin (the signing key) adds her on the Users page; another tab is hers.
  const adminPage = await openPage(t, browser, `${server.url}/dashboard/#/users`, 'desktop')
  await adminPage.fill('#signing-key', TEST_SIGNING_KEY)
  await adminPage.press('#signing-key', 'Enter')
  await adminPage.waitForSelector('#add-user')
  await adminPage.fill('#add-user input[name=email]', 'ana@example.com')
  await adminPage.fill('#add-user input[name=password]', password)
  await adminPage.selectOption('#add-user select[name=role]', 'editor')
  await adminPage.click('#add-user button[type=submit]')
  await adminPage.waitForSelector('#users:has-text("ana@example.com")')
  t.notOk((await adminPage.textContent('main'))!.includes(password), 'the password is not shown')
  // A page of its own context (Playwright's newPage): no key, no cookie.
  const page = await openPage(t, browser, `${server.url}/dashboard/#/keys`, 'desktop')
  await page.waitForSelector('#sign-in')
  t.pass('the sign-in page, without a key or a session')
  await page.fill('#sign-in input[name=email]', 'ana@example.com')
  await page.fill('#sign-in input[name=password]', 'not the password')
  await page.click('#sign-in button[type=submit]')
  await page.waitForSelector('#sign-in [role=alert]:has-text("LOGIN_FAILED")')
  t.pass('a wrong password is refused')
  await page.fill('#sign-in input[name=password]', password)
  await page.click('#sign-in button[type=submit]')
  await page.waitForSelector('#signed-in:has-text("ana@example.com (editor)")')
  t.notOk(await page.isVisible('nav a:has-text("Tokens")'), 'an editor does not see the admin pages')
  await page.click('#create-key button[type=submit]')
  await page.waitForSelector('#new-key')
  t.pass('a change made with the session (its CSRF token sent) is done')
  await page.reload()
  await page.waitForSelector('#signed-in:has-text("ana@example.com (editor)")')
  t.pass('the session outlives a reload')
  await page.click('#sign-out')
  await page.waitForSelector('#sign-in')
  t.pass('signed out')
  const cookies = await page.context().cookies()
  t.notOk(
    cookies.some((c) => c.name === 'sluice_session' && c.value !== ''),
    'the cookie is gone',
  )
  t.same(
    errorsOf(page).filter((e) => !/401|UNAUTHORIZED|LOGIN_FAILED/.test(e)),
    [],
    'no script errors',
  )
})
