// Serving functions from the command line: `sluice dev --functions examples/functions.ts`
// (the example as a user would run it), `--watch` reloads, and `sluice runner` flags.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { eventually, getJson, removeDir, ROOT, spawnServer, startServer, tempDir } from '../helpers/server.ts'
import { finishedRuns, sendEvent } from './fixtures/rest.ts'

t.test('sluice dev --functions examples/functions.ts serves the example functions', async (t) => {
  const dataDir = await tempDir()
  const secret = 'cli-test-partner-secret'
  const server = await spawnServer(
    ['dev', '--port', '0', '--data-dir', dataDir, '--functions', join(ROOT, 'examples/functions.ts')],
    { PARTNER_WEBHOOK_SECRET: secret },
  )
  t.teardown(async () => {
    server.child.kill('SIGTERM')
    await server.stopped
    await removeDir(dataDir)
  })
  const registered = (await getJson(`${server.url}/v1/functions`)).body.data.map(
    (f: any) => `${f.id} ← ${f.triggers[0].event}`,
  )
  t.same(registered, [
    'shop-email-customer ← shop/order.fulfilled',
    'shop-fulfil-order ← shop/order.placed',
    'shop-verified-webhook ← partner/webhook.received',
  ])

  const orderEvent = await sendEvent(server.url, {
    name: 'shop/order.placed',
    data: { orderId: 'o-1', email: 'ada@example.com' },
  })
  const [order] = await finishedRuns(server.url, orderEvent)
  t.equal(order.status, 'completed')
  t.same(order.output, { orderId: 'o-1' })
  t.same(
    order.steps.map((s: any) => s.id),
    ['charge', 'ship', 'announce'],
  )
  const [email] = await finishedRuns(server.url, order.steps[2].output.ids[0])
  t.same(email.output, { to: 'ada@example.com', subject: 'Order o-1 is on its way' })

  const raw = JSON.stringify({ invoice: 'in_1' })
  const good = await sendEvent(server.url, {
    name: 'partner/webhook.received',
    data: { raw, sig: createHmac('sha256', secret).update(raw).digest('hex') },
  })
  const forged = await sendEvent(server.url, {
    name: 'partner/webhook.received',
    data: { raw, sig: createHmac('sha256', 'guess').update(raw).digest('hex') },
  })
  t.match((await finishedRuns(server.url, good))[0], { status: 'completed', output: { invoice: 'in_1' } })
  t.match((await finishedRuns(server.url, forged))[0], {
    status: 'failed',
    attempts: 1,
    error: { name: 'NonRetriableError', message: 'signature does not match' },
  })
})

t.test('--watch reloads the functions file: new triggers are registered and new code runs', async (t) => {
  const dir = await tempDir()
  const file = join(dir, 'functions.ts')
  const version = (trigger: string, greeting: string) => `
    import { Client } from ${JSON.stringify(join(ROOT, 'client/index.ts'))}
    const client = new Client({ id: 'watched' })
    export const greet = client.createFunction({ id: 'greet' }, { event: ${JSON.stringify(trigger)} }, async () => ${JSON.stringify(greeting)})
  `
  await writeFile(join(dir, 'package.json'), '{"type":"module"}') // as in a user's ESM project
  await writeFile(file, version('test/hello', 'hello'))
  const server = await startServer({ flags: { functionsFile: file, watch: true } })
  t.teardown(async () => {
    await server.stop()
    await removeDir(dir)
  })
  const before = await sendEvent(server.url, { name: 'test/hello', data: {} })
  t.equal((await finishedRuns(server.url, before))[0].output, 'hello')

  await writeFile(file, version('test/hi', 'hi'))
  const triggers = await eventually(async () => {
    const fns = (await getJson(`${server.url}/v1/functions`)).body.data
    return fns[0]?.triggers[0].event === 'test/hi' ? fns.map((f: any) => f.triggers[0].event) : undefined
  })
  t.same(triggers, ['test/hi'])
  const after = await sendEvent(server.url, { name: 'test/hi', data: {} })
  t.equal((await finishedRuns(server.url, after))[0].output, 'hi')

  await writeFile(file, 'export const broken = ;')
  await new Promise((resolve) => setTimeout(resolve, 400)) // a failed reload leaves no trace to poll for
  const still = await sendEvent(server.url, { name: 'test/hi', data: {} })
  t.equal((await finishedRuns(server.url, still))[0].output, 'hi', 'a broken edit keeps the previous functions')
})

t.test('sluice runner needs a functions file', async (t) => {
  const result = spawnSync(
    process.execPath,
    ['--no-node-snapshot', '--conditions=sluice-source', join(ROOT, 'bin/sluice.js'), 'runner'],
    {
      env: { ...process.env, SLUICE_SIGNING_KEY: 'a-signing-key-of-some-length', SLUICE_FUNCTIONS: '' },
      encoding: 'utf8',
    },
  )
  t.equal(result.status, 1)
  t.match(
    result.stderr,
    /CONFIG_INVALID: functionsFile \(--functions \/ SLUICE_FUNCTIONS\): sluice runner needs the module/,
  )
})
