// The event bench/ingest and bench/ingest/floor.ts send: an order, ~120 bytes of JSON.
export const event = (i: number) => ({
  name: 'bench/order.created',
  data: { orderId: `o-${i}`, amount: 4200 + i, currency: 'EUR', customer: { id: 'c-9', tier: 'gold' } },
})

/** A JSON array of `n` events. */
export const batchOf = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => event(i)))
