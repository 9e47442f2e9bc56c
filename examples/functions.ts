// Example functions: `sluice dev --functions examples/functions.ts`, then
//   sluice send '{"name":"shop/order.placed","data":{"orderId":"o-1","email":"ada@example.com"}}'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { Client, NonRetriableError } from 'sluice/client'

export const client = new Client({ id: 'shop' })

/** Steps are memoised: if `ship` fails and the run retries, `charge` is not charged again. */
export const fulfilOrder = client.createFunction(
  { id: 'fulfil-order', name: 'Fulfil an order' },
  { event: 'shop/order.placed' },
  async ({ event, step }) => {
    const payment = await step.run('charge', () => ({ orderId: event.data.orderId, charged: true }))
    const shipment = await step.run('ship', () => ({ orderId: payment.orderId, carrier: 'post' }))
    // Sent once per run, even if the run is retried later: the IDs derive from run and step.
    await step.sendEvent('announce', {
      name: 'shop/order.fulfilled',
      data: { orderId: shipment.orderId, email: event.data.email },
    })
    return { orderId: shipment.orderId }
  },
)

export const emailCustomer = client.createFunction(
  { id: 'email-customer' },
  { event: 'shop/order.fulfilled' },
  async ({ event, step }) =>
    step.run('send-email', () => ({ to: event.data.email, subject: `Order ${event.data.orderId} is on its way` })),
)

/**
 * A webhook whose transform forwards the raw body and its signature as `{ raw, sig }`: the
 * function checks the producer's HMAC before trusting the payload. A bad signature will not
 * become good on retry, hence NonRetriableError.
 */
export const verifiedWebhook = client.createFunction(
  { id: 'verified-webhook' },
  { event: 'partner/webhook.received' },
  async ({ event, step }) => {
    const { raw, sig } = event.data as { raw: string; sig: string }
    const secret = process.env.PARTNER_WEBHOOK_SECRET ?? 'partner-dev-secret'
    const expected = createHmac('sha256', secret).update(raw).digest()
    const given = Buffer.from(typeof sig === 'string' ? sig : '', 'hex')
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new NonRetriableError('signature does not match')
    return step.run('handle', () => JSON.parse(raw) as Record<string, unknown>)
  },
)
