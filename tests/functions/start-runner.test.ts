// startRunner({ client, functions }): serving functions from the user's own process.
import t from 'tap'
import { Client } from 'sluice/client'
import { startRunner } from 'sluice/server'
import { client, emailCustomer, fulfilOrder } from '../../examples/functions.ts'
import { getJson, removeDir, tempDir } from '../helpers/server.ts'
import { finishedRuns, sendEvent } from './fixtures/rest.ts'

t.test('startRunner serves the given functions in this process', async (t) => {
  const dataDir = await tempDir()
  const runner = await startRunner({
    client,
    functions: [fulfilOrder, emailCustomer],
    mode: 'dev',
    flags: { port: '0', dataDir, logLevel: 'warn' },
  })
  t.teardown(async () => {
    await runner.stop()
    await removeDir(dataDir)
  })
  t.same(
    (await getJson(`${runner.url}/v1/functions`)).body.data.map((f: any) => f.id),
    ['shop-email-customer', 'shop-fulfil-order'],
  )
  const eventId = await sendEvent(runner.url, {
    name: 'shop/order.placed',
    data: { orderId: 'o-9', email: 'grace@example.com' },
  })
  const [run] = await finishedRuns(runner.url, eventId)
  t.match(run, { status: 'completed', output: { orderId: 'o-9' } })
})

t.test('startRunner refuses functions of another app and what it cannot serve', async (t) => {
  await t.rejects(startRunner({ client: new Client({ id: 'other' }), functions: [fulfilOrder] }), {
    name: 'TypeError',
    message: /functions\[0\] belongs to app "shop", not to the client's app "other"/,
  })
  await t.rejects(startRunner({ client, functions: [{ id: 'not-a-function' } as never] }), {
    name: 'TypeError',
    message: /functions\[0\] is not made by client.createFunction/,
  })
})
