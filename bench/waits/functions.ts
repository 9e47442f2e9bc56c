// Functions for bench/waits (copied in spirit from tests/functions/fixtures/waits.ts, which the
// benches do not import). Times are wall-clock milliseconds (Date.now), the clock a sleep's `until`
// is kept in.
import { Client } from 'sluice/client'

const client = new Client({ id: 'bench' })

/** Sleeps `data.sleep` (default 1h): one execution, then a parked record until it wakes. */
export const sleeper = client.createFunction({ id: 'sleeper' }, { event: 'bench/sleep' }, async ({ event, step }) => {
  await step.sleep('nap', event.data.sleep ?? '1h')
  return null
})

/**
 * Sleeps until `data.until` (epoch ms), then a step that returns when it started: the lateness is
 * that minus `until`, read back from the run's steps over REST.
 */
export const punctual = client.createFunction({ id: 'punctual' }, { event: 'bench/wake' }, async ({ event, step }) => {
  await step.sleepUntil('nap', event.data.until)
  return step.run('after', () => Date.now())
})

/** The steady load beside the sleepers: one step and the return, as most functions. */
export const busy = client.createFunction({ id: 'busy' }, { event: 'bench/load' }, async ({ event, step }) => {
  return step.run('work', () => (event.data.n as number) * 2)
})

/** Waits up to 1h for `bench/paid` with the same `data.order`. */
export const waiter = client.createFunction({ id: 'waiter' }, { event: 'bench/order' }, async ({ step }) => {
  const paid = await step.waitForEvent('paid', { event: 'bench/paid', match: 'data.order', timeout: '1h' })
  return paid === null ? null : paid.internalId
})
