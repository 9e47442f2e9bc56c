// The Incidents page in a real Chromium against a real Dev Server: an alert on a webhook's failures
// opens an incident that links to the failing requests; "Replay failed" replays them after a fix, and
// the incident resolves.
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { launchChromium } from '../infra/chromium.ts'
import { startServer, getJson, postJson, eventually } from '../helpers/server.ts'
import { ensureDashboardBuilt, errorsOf, openPage } from './browser.ts'

await ensureDashboardBuilt()
const server = await startServer({ flags: { alertEvaluateIntervalMs: '200' } })
t.teardown(() => server.stop())
const browser: Browser = await launchChromium()
t.teardown(() => browser.close())
const receiver = createServer((_req, res) => res.writeHead(204).end())
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`

const incidentOf = async (ruleId: string) =>
  (await getJson(`${server.url}/v1/alerts/incidents`)).body.data.find((i: any) => i.rule_id === ruleId)

t.test('an open incident links to the failing requests, and "Replay failed" resolves it', async (t) => {
  const hook = (
    await postJson(`${server.url}/v1/webhooks`, {
      name: 'dash-alert',
      transform: 'function transform(evt) { return { name: "a/b", data: evt.nope.x } }',
    })
  ).body.data
  const rule = (
    await postJson(`${server.url}/v1/alerts`, {
      name: 'dash failing',
      webhook_id: hook.id,
      metric: 'failed_requests',
      threshold: 1,
      endpoint,
    })
  ).body.data
  for (let n = 0; n < 2; n++) t.equal((await postJson(hook.url, { n })).status, 200)
  const incident = await eventually(async () => {
    const i = await incidentOf(rule.id)
    return i?.notification.status === 'delivered' ? i : undefined
  }, 20_000)

  const page = await openPage(t, browser, `${server.url}/dashboard/#/incidents`)
  const row = `#incidents [data-id="${incident.id}"]`
  await page.waitForSelector(row)
  t.match(await page.textContent(row), /dash failing/)
  t.match(await page.textContent(row), /open/)
  t.match(await page.textContent(row), /fired delivered/, 'the notification reached the endpoint')
  t.equal(await page.getAttribute(`${row} a.failing`, 'href'), `#/webhooks/${hook.id}`)

  await fetch(`${server.url}/v1/webhooks/${hook.id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ transform: 'function transform(evt) { return { name: "a/b", data: evt } }' }),
  })
  await page.click(`${row} button.replay-failing`)
  await page.waitForSelector(`${row} .ok`)
  t.match(await page.textContent(`${row} .ok`), /2 replayed/)
  await eventually(async () => ((await incidentOf(rule.id))?.status === 'resolved' ? true : undefined), 20_000)
  await page.reload()
  await page.waitForSelector(row)
  t.match(await page.textContent(row), /resolved/)
  await page.click(`${row} a.failing`)
  await page.waitForSelector('#edit-webhook')
  t.same(errorsOf(page), [])
})
