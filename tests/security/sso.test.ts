// Single sign-on (issue 51, item 2) against a real OpenID Provider (oidc-provider, OpenID Certified)
// through the dashboard in a real Chromium: "Sign in with SSO", the provider's sign-in and consent,
// back to Sluice with a session; the user appears on first sign-in with the role and environments of
// the claim, and follows the claim at the next; a user without the claim is refused; a callback
// without a sign-in under way is refused; no client secret in a log line or an answer.
import t from 'tap'
import { Writable } from 'node:stream'
import { loadConfig } from '../../config/config.ts'
import { startEmbedded } from '../../server/embedded.ts'
import { createLogger } from '../../server/log.ts'
import { launchChromium } from '../infra/chromium.ts'
import { startOidcProvider } from '../infra/oidc-provider.ts'
import { freePort } from '../infra/ports.ts'
import { ensureDashboardBuilt, openPage } from '../dashboard/browser.ts'
import { tempDir, TEST_SIGNING_KEY } from '../helpers/server.ts'

await ensureDashboardBuilt()
const port = await freePort()
const sluiceUrl = `http://127.0.0.1:${port}`
const accounts: Record<string, Record<string, unknown>> = {
  ana: { email: 'ana@example.com', email_verified: true, sluice_role: 'editor:staging' },
  nobody: { email: 'nobody@example.com', email_verified: true },
}
const provider = await startOidcProvider({ redirectUri: `${sluiceUrl}/v1/auth/oidc/callback`, accounts })
t.teardown(() => provider.stop())

const lines: string[] = []
const sink = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk))
    done()
  },
})
const config = loadConfig(
  'start',
  {
    port: String(port),
    host: '127.0.0.1',
    dataDir: await tempDir(),
    signingKey: TEST_SIGNING_KEY,
    opsPort: '0',
    logLevel: 'debug',
    oidcIssuer: provider.issuer,
    oidcClientId: provider.clientId,
    oidcClientSecret: provider.clientSecret,
    publicUrl: sluiceUrl,
  },
  {},
)
const server = await startEmbedded(config, createLogger('debug', sink))
t.teardown(() => server.stop())
const admin = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${sluiceUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TEST_SIGNING_KEY}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() }
}
await admin('POST', '/v1/envs', { name: 'staging' })
const browser = await launchChromium()
t.teardown(() => browser.close())

async function signInThroughProvider(t: Parameters<typeof openPage>[0], login: string) {
  const page = await openPage(t, browser, `${sluiceUrl}/dashboard/#/events`, 'desktop')
  await page.click('#sso')
  await page.waitForSelector('input[name=login]')
  await page.fill('input[name=login]', login)
  await page.fill('input[name=password]', 'any password')
  await page.click('button[type=submit]')
  await page.waitForSelector('button:has-text("Continue")')
  await page.click('button:has-text("Continue")')
  return page
}

t.test('a user signs in with SSO and appears with the role and environments of the claim', async (t) => {
  const page = await signInThroughProvider(t, 'ana')
  await page.waitForSelector('#signed-in:has-text("ana@example.com (editor)")')
  t.pass('back in the dashboard, signed in')
  await page.waitForSelector('#live-status:has-text("Live")')
  t.equal(await page.inputValue('#env-switcher'), 'staging', 'in the environment the claim gives')
  t.same(await page.locator('[role=alert]').allTextContents(), [], 'and no page refuses it')
  const users = (await admin('GET', '/v1/users')).body.data
  t.match(users, [{ email: 'ana@example.com', role: 'editor', envs: ['staging'], sign_in: 'sso' }])
  const audit = (await admin('GET', '/v1/audit?action=auth:login')).body.data
  t.ok(
    audit.some((e: any) => e.actor.name === 'ana@example.com' && e.status === 200),
    'the sign-in is audited',
  )

  // The claim changes at the provider: the next sign-in follows it.
  accounts.ana.sluice_role = 'viewer'
  const again = await signInThroughProvider(t, 'ana')
  await again.waitForSelector('#signed-in:has-text("ana@example.com (viewer)")')
  t.match((await admin('GET', '/v1/users')).body.data, [{ email: 'ana@example.com', role: 'viewer', envs: null }])
  t.equal((await admin('GET', '/v1/users')).body.data.length, 1, 'the same user, not another')
})

t.test('a user the provider gives no role is refused', async (t) => {
  const page = await signInThroughProvider(t, 'nobody')
  await page.waitForSelector('text=SSO_ROLE_MISSING')
  t.match(await page.textContent('body'), /sluice_role: the ID token must give viewer, editor or admin/)
  t.notOk(
    (await admin('GET', '/v1/users')).body.data.some((u: any) => u.email === 'nobody@example.com'),
    'and not added',
  )
})

t.test('a callback without a sign-in under way is refused; no secret is logged', async (t) => {
  const forged = await fetch(`${sluiceUrl}/v1/auth/oidc/callback?code=abc&state=forged`)
  t.equal(forged.status, 401)
  t.match(await forged.json(), { code: 'SSO_FAILED', error: /^state: no sign-in under way/ })
  t.ok(lines.length > 0, 'it logged')
  t.notOk(lines.join('').includes(provider.clientSecret), 'no client secret in a log line')
  const providers = await fetch(`${sluiceUrl}/v1/auth/providers`)
  t.same(await providers.json(), { data: { password: true, sso: true } })
})
