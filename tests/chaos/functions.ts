// Functions served by the chaos runs' runner. Every step appends one line to the file named by
// CHAOS_SIDE_EFFECTS_FILE (an O_APPEND write of one short line is atomic), so the checks can
// count how often each step of each run really executed, across kill -9s of the runner.
import { appendFileSync } from 'node:fs'
import { Client } from 'sluice/client'

const client = new Client({ id: 'chaos' })

function sideEffect(fn: string, step: string, eventId: string, attempt: number): void {
  appendFileSync(process.env.CHAOS_SIDE_EFFECTS_FILE!, `${fn}\t${step}\t${eventId}\t${attempt}\t${process.pid}\n`)
}

/**
 * Two steps, a sleep, a wait for the order's payment, and a sent event; an order marked `flaky` fails
 * its first attempt, so its retry is parked. Kills land on runs sleeping, waiting and retrying.
 */
export const fulfil = client.createFunction(
  { id: 'fulfil', retries: 5 },
  { event: 'chaos/order' },
  async ({ event, step, attempt }) => {
    await step.run('reserve', () => sideEffect('fulfil', 'reserve', event.internalId, attempt))
    if (event.data.flaky === true && attempt === 0)
      throw new Error('the first attempt of a flaky order fails on purpose')
    await step.sleep('cool-down', '1s')
    const paid = await step.waitForEvent('paid', {
      event: 'chaos/paid',
      if: 'async.data.order == event.internalId',
      timeout: '30s',
    })
    await step.run('charge', () => sideEffect('fulfil', 'charge', event.internalId, attempt))
    await step.sendEvent('shipped', { name: 'chaos/shipped', data: { order: event.internalId } })
    return { order: event.internalId, paid: paid !== null }
  },
)

/** Pays each order a few seconds later, after `fulfil` began to wait for it. */
export const pay = client.createFunction({ id: 'pay' }, { event: 'chaos/order' }, async ({ event, step, attempt }) => {
  await step.sleep('delay', '8s')
  await step.run('pay', () => sideEffect('pay', 'pay', event.internalId, attempt))
  await step.sendEvent('paid', { name: 'chaos/paid', data: { order: event.internalId } })
})

/** One step per webhook event, so webhook deliveries are checked end to end as well. */
export const audit = client.createFunction(
  { id: 'audit' },
  { event: 'chaos/webhook.paid' },
  async ({ event, step, attempt }) => {
    await step.run('record', () => sideEffect('audit', 'record', event.internalId, attempt))
  },
)
