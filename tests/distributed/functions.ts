// Functions served by the distributed tests' runner process.
import { Client } from 'sluice/client'

const client = new Client({ id: 'e2e' })

export const fulfil = client.createFunction(
  { id: 'fulfil' },
  { event: 'e2e/order.placed' },
  async ({ event, step }) => {
    return step.run('fulfil', async () => ({ orderId: event.data.orderId }))
  },
)

export const notify = client.createFunction({ id: 'notify' }, { event: 'e2e/order.placed' }, async ({ event }) => ({
  notified: event.data.orderId,
}))
